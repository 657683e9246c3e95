// Sandbox FX prices (DESIGN.md section 5b). Each quoted pair (USD/EUR, USD/GBP, EUR/GBP) has a
// mid-rate that moves with the clock along a triangle wave: ±0.5 % around its base over an hour,
// so a rate locked 30 s ago visibly differs from the live one after a while, and a test can ask
// for any moment. Inverses are 1 / mid, never quoted apart. A client gets the mid-rate less
// SPREAD, rounded down to 6 decimals, and to_amount = from_amount × rate rounded down to the
// target currency's scale: every step rounds against the client, so no round trip makes money.
// All of it is decimal arithmetic on integers and bignumber.js, never a JS float.
import { CURRENCIES, CURRENCY_SCALE, Money, type Amount, type Currency } from './money';

/** What the client pays over the mid-rate, as a fraction of the amount: 0.25 %. */
export const SPREAD = new Money('0.0025');
export const RATE_DECIMALS = 6;
const WAVE_PERIOD_MS = 60 * 60 * 1000;
const WAVE_AMPLITUDE = new Money('0.005');

/** The quoted pairs and their base mid-rates: 1 unit of `from` buys `base` units of `to`. */
const QUOTED: ReadonlyArray<{ from: Currency; to: Currency; base: Amount; phaseMs: number }> = [
  { from: 'USD', to: 'EUR', base: new Money('0.92'), phaseMs: 0 },
  { from: 'USD', to: 'GBP', base: new Money('0.79'), phaseMs: 20 * 60 * 1000 },
  { from: 'EUR', to: 'GBP', base: new Money('0.86'), phaseMs: 40 * 60 * 1000 },
];

/** USD, EUR and GBP among themselves, either way. */
export function isSupportedPair(from: Currency, to: Currency): boolean {
  return QUOTED.some((pair) => (pair.from === from && pair.to === to) || (pair.from === to && pair.to === from));
}

/** The currencies `from` converts to. */
export const conversionTargets = (from: Currency): Currency[] => CURRENCIES.filter((to) => to !== from && isSupportedPair(from, to));

/**
 * The supported pairs as rules of a request body (for the OpenAPI document and the validation
 * alike): for each currency `from` may hold, the currencies `to` may hold; a pair outside them
 * is 400 unsupported_pair on `to`. `to` is a path of property names; `same` allows `to` to be
 * `from` itself (a payout in the currency sent).
 */
export function conversionRules(from: string, to: string[], same: boolean): Array<Record<string, unknown>> {
  return CURRENCIES.map((currency) => {
    const allowed = [...(same ? [currency] : []), ...conversionTargets(currency)];
    const message = `${currency} ${same ? 'is paid out in' : 'converts to'} ${allowed.length > 0 ? allowed.join(', ') : 'no other currency'} only; USD, EUR and GBP convert among themselves`;
    const leaf: Record<string, unknown> = allowed.length > 0
      ? { type: 'string', enum: allowed, 'x-error': 'unsupported_pair', 'x-message': message }
      : { not: {}, 'x-error': 'unsupported_pair', 'x-message': message };
    // The body itself is an object already; the objects on the way to `to` are said to be.
    let rule: Record<string, unknown> = leaf;
    for (let i = to.length - 1; i > 0; i -= 1) rule = { type: 'object', properties: { [to[i]]: rule } };
    return { if: { properties: { [from]: { const: currency } }, required: [from] }, then: { properties: { [to[0]]: rule } } };
  });
}

/** A triangle wave in [-1, 1] of the clock, exact: integers, then one decimal division. */
function wave(atMs: number, phaseMs: number): Amount {
  const position = (((atMs + phaseMs) % WAVE_PERIOD_MS) + WAVE_PERIOD_MS) % WAVE_PERIOD_MS; // 0 .. period
  const quarter = WAVE_PERIOD_MS / 4;
  // Rises from 0 to 1 over the first quarter, falls to -1 by the third, rises back to 0.
  const steps = position < quarter ? position : position < 3 * quarter ? 2 * quarter - position : position - 4 * quarter;
  return new Money(steps).dividedBy(quarter);
}

/** The mid-rate of `from` → `to` at `at`: how many units of `to` one unit of `from` is worth. */
export function midRate(from: Currency, to: Currency, at: Date): Amount {
  for (const pair of QUOTED) {
    const mid = () => pair.base.times(new Money(1).plus(WAVE_AMPLITUDE.times(wave(at.getTime(), pair.phaseMs))));
    if (pair.from === from && pair.to === to) return mid();
    if (pair.from === to && pair.to === from) return new Money(1).dividedBy(mid());
  }
  throw new Error(`${from} to ${to} is not a quoted pair`); // callers check isSupportedPair first
}

export interface Price {
  midRate: string;
  rate: string;
  spread: string;
  toAmount: string;
}

/** A conversion priced at one moment: what a public quote shows and a persisted one locks. */
export interface PricedConversion { from: Currency; to: Currency; fromAmount: Amount; price: Price; at: Date }

/** What `fromAmount` of `from` buys in `to` at `at`, the spread taken. */
export function price(from: Currency, to: Currency, fromAmount: Amount, at: Date): Price {
  const mid = midRate(from, to, at);
  const rate = mid.times(new Money(1).minus(SPREAD)).decimalPlaces(RATE_DECIMALS, Money.ROUND_DOWN);
  const toAmount = fromAmount.times(rate).decimalPlaces(CURRENCY_SCALE[to], Money.ROUND_DOWN);
  return {
    midRate: mid.toFixed(RATE_DECIMALS, Money.ROUND_HALF_EVEN),
    rate: rate.toFixed(RATE_DECIMALS),
    spread: SPREAD.toFixed(),
    toAmount: toAmount.toFixed(CURRENCY_SCALE[to]),
  };
}
