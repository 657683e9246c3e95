// What a reversal of a transfer paid through a partner gives back of each leg of the transfer's
// settlement (DESIGN.md section 5h): the recipient's payout and, for a conversion, the FX desk's
// spread, in proportion to the amount reversed, at the transfer's own rate, never today's. Each part
// is the difference of two cumulative roundings, half-even at the payout currency's scale:
//
//   part_k = round(total × cum_k / amount) − (what the live reversals before it took)
//
// where cum_k is the sum of the transfer's live reversals (pending or completed) with this one.
// Reversals that add up to the whole transfer then give back exactly the original legs, however it
// was divided; while none failed, each part is within one unit of the scale of its exact
// proportion. A failed reversal frees its part, and the next ones make up the difference (never
// below zero), so the whole still comes back exactly.
import { CURRENCY_SCALE, Money, type Amount, type Currency } from './money';
import { conversionOf, conversionSpread } from './postings';
import type { TransferRecord, TransferReversal } from './transfers';

/** What one reversal gives back of the settlement's legs in the payout currency. */
export interface ReversalParts {
  /** What the recipient gives back. */
  payout: Amount;
  /** What the FX desk's spread gives back (zero without a conversion). */
  spread: Amount;
}

/**
 * `numerator / denominator` rounded half-even to `scale` places, exactly: both are decimals, so
 * scaled to integers the quotient's remainder decides the rounding, with no division rounded first.
 */
export function roundedQuotient(numerator: Amount, denominator: Amount, scale: number): Amount {
  const places = Math.max(numerator.decimalPlaces() ?? 0, denominator.decimalPlaces() ?? 0);
  const shift = new Money(10).exponentiatedBy(places);
  const n = numerator.times(shift).times(new Money(10).exponentiatedBy(scale));
  const d = denominator.times(shift);
  const quotient = n.dividedToIntegerBy(d);
  const twiceRemainder = n.minus(quotient.times(d)).times(2);
  const up = twiceRemainder.isGreaterThan(d) || (twiceRemainder.isEqualTo(d) && !quotient.mod(2).isZero());
  return (up ? quotient.plus(1) : quotient).dividedBy(new Money(10).exponentiatedBy(scale));
}

/** The part of `total` a reversal takes when the live reversals reach `cumulative` of `amount` with it and took `taken` before it. */
export function cumulativePart(total: Amount, amount: Amount, cumulative: Amount, taken: Amount, currency: Currency): Amount {
  const due = roundedQuotient(total.times(cumulative), amount, CURRENCY_SCALE[currency]);
  return Money.max(due.minus(taken), 0);
}

/** The reversals that still count against the transfer: pending and completed, not failed. */
export const liveReversals = (transfer: Pick<TransferRecord, 'reversals'>): TransferReversal[] => (transfer.reversals ?? []).filter((r) => r.status !== 'failed');

const sum = (reversals: TransferReversal[], field: 'amount' | 'payout_amount' | 'spread_amount') =>
  reversals.reduce((total, r) => total.plus(r[field] ?? 0), new Money(0));

/** What reversing `amount` more of `transfer` gives back of its payout and its spread, after the live reversals it already has. */
export function reversalParts(transfer: TransferRecord, amount: Amount): ReversalParts {
  const live = liveReversals(transfer);
  const cumulative = sum(live, 'amount').plus(amount);
  const whole = new Money(transfer.amount);
  const payout = cumulativePart(new Money(transfer.payout_amount), whole, cumulative, sum(live, 'payout_amount'), transfer.payout_currency);
  const conversion = conversionOf(transfer);
  const spreadTotal = conversion === null ? new Money(0) : conversionSpread(conversion);
  const spread = spreadTotal.isZero() ? spreadTotal : cumulativePart(spreadTotal, whole, cumulative, sum(live, 'spread_amount'), transfer.payout_currency);
  return { payout, spread };
}
