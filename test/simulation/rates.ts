// The published rate table (README "FX quotes") as the model knows it, so that a price is judged
// by what was published, not by the service's word: each pair's mid-rate within ±0.5 % of its base
// (USD/EUR 0.92, USD/GBP 0.79, EUR/GBP 0.86; the inverse is 1 / mid), moving with the clock by at
// most the band's width (1 %) in half an hour; `rate` = mid × (1 − 0.0025) rounded down to 6
// decimals; a payout = amount × rate rounded down to the cent. Every price the run sees (persisted
// and public quotes, cross-currency transfers and batch items) is an observation of the pair's mid
// somewhere in a window of time (sent to answered or read); any two observations of a pair must be
// within what the clock allows between their windows.
import { Money, type Amount } from '../../ledger/money';
import type { Findings } from './findings';

const BASES: Record<string, Amount> = { 'USD/EUR': new Money('0.92'), 'USD/GBP': new Money('0.79'), 'EUR/GBP': new Money('0.86') };
const BAND = new Money('0.005');
const SPREAD = new Money('0.0025');
/** How far a mid may move in a millisecond, as a share of its base: 1 % in 30 minutes. */
const DRIFT_PER_MS = new Money('0.01').dividedBy(30 * 60 * 1000);
/** The shown mid is rounded to 6 decimals; the rate is computed from the unrounded mid. */
const ROUNDING = new Money('0.000002');
/** Our clock against the service's (one machine): a second either way. */
const SKEW_MS = 1_000;
const KEEP = 64;

interface Observation { mid: Amount; from: number; to: number; label: string }

/** A price as routes show it. */
export interface ShownPrice { rate: string; mid_rate: string; spread: string }

export class RateBook {
  /** Per quoted pair (its published direction), the latest observations. */
  private readonly seen = new Map<string, Observation[]>();
  /** How far the service's clocks may be from ours: more while a run steps a process's clock (plan.ts clock_step). */
  skewMs = SKEW_MS;
  constructor(private readonly findings: Findings) {}

  /** Checks a price shown for `from` → `to` somewhere between `fromMs` and `toMs` against the table and every earlier observation of the pair. */
  observe(label: string, client: number, from: string, to: string, price: ShownPrice, fromMs: number, toMs: number): void {
    const direct = BASES[`${from}/${to}`];
    const base = direct ?? BASES[`${to}/${from}`];
    const { findings } = this;
    if (!findings.expect(base !== undefined, 'a price only for a published pair', () => `${label}: ${from}->${to}`, [client])) return;
    const mid = new Money(price.mid_rate);
    const rate = new Money(price.rate);
    findings.expect(new Money(price.spread).isEqualTo(SPREAD) && rate.decimalPlaces()! <= 6 && rate.minus(mid.times(new Money(1).minus(SPREAD))).abs().isLessThanOrEqualTo(ROUNDING),
      'a rate is the mid less the published spread, rounded down to 6 decimals', () => `${label}: rate ${price.rate}, mid ${price.mid_rate}, spread ${price.spread}`, [client]);
    // In the published direction (the inverse's mid is 1 / mid).
    const published = direct ? mid : new Money(1).dividedBy(mid);
    const low = base.times(new Money(1).minus(BAND)).times(new Money(1).minus(ROUNDING));
    const high = base.times(new Money(1).plus(BAND)).times(new Money(1).plus(ROUNDING));
    findings.expect(published.isGreaterThanOrEqualTo(low) && published.isLessThanOrEqualTo(high), "a mid-rate within the published band around its pair's base",
      () => `${label}: ${from}->${to} mid ${price.mid_rate} (${published.toFixed(6)} in the published direction), band ${low.toFixed(6)} to ${high.toFixed(6)}`, [client]);
    const pair = direct ? `${from}/${to}` : `${to}/${from}`;
    const observation: Observation = { mid: published, from: fromMs - this.skewMs, to: toMs + this.skewMs, label };
    const earlier = this.seen.get(pair) ?? [];
    // One check against every earlier observation: the first it is too far from fails it.
    const tooFar = earlier.map((other) => {
      const apartMs = Math.max(observation.to - other.from, other.to - observation.from);
      return { other, apartMs, allowed: base.times(DRIFT_PER_MS.times(Math.max(0, apartMs))).plus(base.times(ROUNDING).times(2)) };
    }).find(({ other, allowed }) => published.minus(other.mid).abs().isGreaterThan(allowed));
    findings.expect(tooFar === undefined, 'mid-rates of a pair move no faster than the published clock allows',
      () => `${label}: ${pair} mid ${published.toFixed(6)}, and ${tooFar!.other.label}: ${tooFar!.other.mid.toFixed(6)}, at most ${(tooFar!.apartMs / 1000).toFixed(1)} s apart (allowed ±${tooFar!.allowed.toFixed(6)})`, [client]);
    earlier.push(observation);
    if (earlier.length > KEEP) earlier.shift();
    this.seen.set(pair, earlier);
  }
}

/** What `amount` buys at `rate`, rounded down to the cent (the fiat currencies the run converts). */
export const payoutAt = (amount: Amount | string, rate: string): Amount => new Money(amount).times(rate).decimalPlaces(2, Money.ROUND_DOWN);
