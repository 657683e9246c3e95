// Sandbox magic amounts: the cents of an amount pick how a mock partner behaves, so every
// failure the service must handle can be reproduced on demand (DESIGN.md section 5, Partners).
//
// The cents are the first two fractional digits once trailing zeros are dropped, so "10.13",
// "250.13", "10.130" and the USDC amount "0.130000" all have cents 13. An amount with
// sub-cent precision ("10.135") is never magic, and neither is a malformed one: the partner
// validates amounts separately.
//
// | cents | behaviour | what the partner does                                                  |
// |-------|-----------|------------------------------------------------------------------------|
// | 13    | outage    | first 2 submits of a reference: 503 temporarily_unavailable,           |
// |       |           | Retry-After: 0; the 3rd submit succeeds normally                       |
// | 55    | lost      | the first submit of a reference creates the payment but answers 500   |
// |       | answer    | internal; a resubmission of the reference returns the payment (200)   |
// | 66    | decline   | 422 declined on every submit; no payment is created                    |
// | 77    | error     | 500 internal on every submit; no payment is created                    |
// | 99    | reverse   | accepted as `pending` (even on fiat), then `reversed` after            |
// |       |           | chainConfirmMs; never `completed`                                      |
// | other | normal    | the partner's usual flow (see partners.ts)                             |

export type MagicBehaviour = 'normal' | 'outage' | 'lost_answer' | 'decline' | 'reverse' | 'error';

const BEHAVIOUR_BY_CENTS: Readonly<Record<string, MagicBehaviour>> = {
  '13': 'outage',
  '55': 'lost_answer',
  '66': 'decline',
  '77': 'error',
  '99': 'reverse',
};

const DECIMAL_AMOUNT = /^\d+(?:\.(\d+))?$/;

/** The behaviour the sandbox magic table assigns to `amount` (a decimal string). Pure. */
export function magicBehaviour(amount: string): MagicBehaviour {
  const match = DECIMAL_AMOUNT.exec(amount);
  if (!match) return 'normal';
  const fraction = (match[1] ?? '').replace(/0+$/, '');
  if (fraction.length > 2) return 'normal';
  const cents = fraction.padEnd(2, '0');
  return BEHAVIOUR_BY_CENTS[cents] ?? 'normal';
}
