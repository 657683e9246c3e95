// Sandbox virtual accounts: a real-looking, checksummed account number per fiat currency, so
// external transfers can be addressed to a sandbox user's bank details.
import { randomBytes, randomInt } from 'node:crypto';

export interface VibanDetails {
  currency: 'USD' | 'EUR' | 'GBP';
  bank_name: string;
  bank_country: string;
  account_number: string;
  routing_number: string;
}

const digits = (count: number): string => Array.from({ length: count }, () => randomInt(10)).join('');

/** ISO 13616 check digits: move the country and "00" to the end, letters to numbers, 98 - mod 97. */
export function ibanCheckDigits(country: string, bban: string): string {
  const rearranged = `${bban}${country}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const ch of rearranged) remainder = (remainder * 10 + Number.parseInt(ch, 10)) % 97;
  return String(98 - remainder).padStart(2, '0');
}

/** ABA routing number checksum: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10). */
function abaRoutingNumber(): string {
  const first8 = `0${digits(7)}`;
  const d = first8.split('').map(Number);
  const partial = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5]);
  return `${first8}${(10 - (partial % 10)) % 10}`;
}

export function newVibans(): VibanDetails[] {
  const deBban = `${'37040044'}${digits(10)}`;
  const gbBban = `SBOX${'601613'}${digits(8)}`;
  return [
    { currency: 'USD', bank_name: 'Sandbox Bank USA', bank_country: 'US', account_number: digits(12), routing_number: abaRoutingNumber() },
    { currency: 'EUR', bank_name: 'Sandbox Bank Europe', bank_country: 'DE', account_number: `DE${ibanCheckDigits('DE', deBban)}${deBban}`, routing_number: 'SBOXDEFFXXX' },
    { currency: 'GBP', bank_name: 'Sandbox Bank UK', bank_country: 'GB', account_number: `GB${ibanCheckDigits('GB', gbBban)}${gbBban}`, routing_number: '601613' },
  ];
}

export function newChainWalletAddress(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}
