// The one money module: parsing, scale and formatting of amounts. Amounts are decimal strings
// on the wire and BigNumber in code; a JS number never holds money.
import BigNumber from 'bignumber.js';

// Independent configuration, so no other BigNumber user can change how money rounds.
export const Money = BigNumber.clone({ DECIMAL_PLACES: 18, ROUNDING_MODE: BigNumber.ROUND_HALF_EVEN, EXPONENTIAL_AT: 1e9 });
export type Amount = BigNumber;

/** Currencies the sandbox moves, with their scale (DESIGN.md section 4). */
export const CURRENCY_SCALE = { USD: 2, EUR: 2, GBP: 2, USDC: 6, EURC: 6 } as const;
export type Currency = keyof typeof CURRENCY_SCALE;
export const CURRENCIES = Object.keys(CURRENCY_SCALE) as Currency[];

/** Balance totals roll stablecoin rails into their settlement currency (SPEC.md section 2). */
export const SETTLEMENT_CURRENCY: Record<Currency, Currency> = { USD: 'USD', EUR: 'EUR', GBP: 'GBP', USDC: 'USD', EURC: 'EUR' };
export const FIAT_CURRENCIES: readonly Currency[] = ['USD', 'EUR', 'GBP'];
export const STABLECOINS: readonly Currency[] = ['USDC', 'EURC'];

/** A currency or amount the ledger does not accept, naming the field it came from. */
export class InvalidMoney extends Error {
  constructor(readonly code: 'invalid_currency' | 'invalid_request', message: string, readonly field: string) {
    super(message);
    this.name = 'InvalidMoney';
  }
}

export function isCurrency(code: string): code is Currency {
  return Object.prototype.hasOwnProperty.call(CURRENCY_SCALE, code);
}

/** @throws InvalidMoney invalid_currency */
export function requireCurrency(code: string, field = 'currency'): Currency {
  if (!isCurrency(code)) {
    throw new InvalidMoney('invalid_currency', `${field} must be one of ${CURRENCIES.join(', ')}`, field);
  }
  return code;
}

const DECIMAL_PATTERN = /^(0|[1-9]\d{0,17})(\.\d+)?$/;

/**
 * Parses a positive decimal string at most at the currency's scale.
 * @throws InvalidMoney invalid_request naming `field`
 */
export function parseAmount(text: unknown, currency: Currency, field = 'amount'): Amount {
  if (typeof text !== 'string') throw new InvalidMoney('invalid_request', `${field} must be a decimal string such as "10.00"`, field);
  if (!DECIMAL_PATTERN.test(text)) throw new InvalidMoney('invalid_request', `${field} must be a plain positive decimal string such as "10.00"`, field);
  const scale = CURRENCY_SCALE[currency];
  const decimals = text.includes('.') ? text.split('.')[1].length : 0;
  if (decimals > scale) throw new InvalidMoney('invalid_request', `${field} has more than ${scale} decimal places for ${currency}`, field);
  const amount = new Money(text);
  if (!amount.isGreaterThan(0)) throw new InvalidMoney('invalid_request', `${field} must be greater than zero`, field);
  return amount;
}

/** Prints an amount at the currency's full scale ("10.00", "1.500000"). */
export function formatAmount(amount: Amount | string, currency: Currency): string {
  return new Money(amount).toFixed(CURRENCY_SCALE[currency], BigNumber.ROUND_HALF_EVEN);
}

/**
 * A positive decimal string: at most 18 digits before the point and 6 after, not zero. The
 * currency's own scale (2 decimals for USD, EUR and GBP) is a rule across two fields: the body
 * states it with amountScaleRule, and parseAmount checks it again.
 */
export const amountSchema = {
  type: 'string',
  pattern: '^([1-9][0-9]{0,17}(\\.[0-9]{1,6})?|0\\.(0{0,5}[1-9]|0{0,4}[1-9][0-9]|0{0,3}[1-9][0-9]{2}|0{0,2}[1-9][0-9]{3}|0?[1-9][0-9]{4}|[1-9][0-9]{5}))$',
  description: 'a positive decimal string such as "10.00", with at most the currency\'s decimals: 2 for USD, EUR and GBP, 6 for USDC and EURC',
  examples: ['10.00', '0.50', '1250'],
} as const;

export const currencySchema = {
  type: 'string', enum: CURRENCIES, 'x-error': 'invalid_currency', description: `one of ${CURRENCIES.join(', ')}`, examples: ['USD', 'EUR', 'GBP'],
} as const;

/** A fiat amount: as amountSchema, with at most 2 decimals. */
const FIAT_AMOUNT_PATTERN = '^([1-9][0-9]{0,17}(\\.[0-9]{1,2})?|0\\.(0[1-9]|[1-9][0-9]?))$';

/**
 * The currency's scale as a rule of the object that holds both fields, for the document and the
 * validation alike: a fiat currency's amount has at most 2 decimals (amountSchema allows 6).
 */
export function amountScaleRule(amountField = 'amount', currencyField = 'currency') {
  return {
    if: { properties: { [currencyField]: { enum: FIAT_CURRENCIES } }, required: [currencyField] },
    then: { properties: { [amountField]: { type: 'string', pattern: FIAT_AMOUNT_PATTERN, description: `a positive decimal string with at most 2 decimal places for ${FIAT_CURRENCIES.join(', ')}` } } },
  } as const;
}
