// The model of the accounts on test clocks, exact because one client moves them one step at a
// time: per account and currency the available and held balance to the cent; per clock its time;
// each hold's expiry, each quote's, each schedule's occurrences. An advance plays what fell due on
// the clock in time order, as DESIGN.md section 5i says the service must (a hold released at its
// expires_at, back to available; each run at its own instant, refused for insufficient_funds when
// the sender's available is short then), from the model's own rules, never from the service's
// answers: the checks (clock-checks.ts) compare the two.
import { Money, type Amount } from '../../ledger/money';
import { QUOTE_TTL_MS, type Repeat } from './clock-plan';

export interface ModelHold { id: string; account: number; currency: string; amount: Amount; expiresAtMs: number; status: 'active' | 'expired' | 'voided' }
/** `state`: open until executed, or until an execution was refused as expired (it never executes then). */
export interface ModelQuote { id: string; account: number; from: string; to: string; fromAmount: Amount; toAmount: Amount; expiresAtMs: number; state: 'open' | 'executed' | 'expired' }
export interface ModelRun { occurrence: number; atMs: number; status: 'created' | 'refused'; error: string | null }
export interface ModelSchedule {
  id: string; account: number; to: number; currency: string; amount: Amount; runAtMs: number; repeat: Repeat; runs: ModelRun[];
}
/**
 * The model's state as plain data, the service's ids left out (they differ from run to run): every
 * clock's time, each account's balances, each hold, quote and schedule with its runs, in the order
 * they were made. Nothing in it depends on the wall's time, so two runs of a seed must give the same.
 */
export interface ClockSnapshot {
  nowMs: number[];
  balances: Record<string, { available: string; held: string }>;
  holds: Array<Omit<ModelHold, 'id' | 'amount'> & { amount: string }>;
  quotes: Array<Omit<ModelQuote, 'id' | 'fromAmount' | 'toAmount'> & { fromAmount: string; toAmount: string }>;
  schedules: Array<Omit<ModelSchedule, 'id' | 'amount'> & { amount: string }>;
}

/** What an advance did, in the order it did it. */
export type Happening =
  | { kind: 'expired'; hold: ModelHold; atMs: number }
  | { kind: 'run'; schedule: ModelSchedule; run: ModelRun };

const daysIn = (year: number, month: number): number => [31, (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month];

/**
 * When occurrence `n` (1 is run_at) falls due: a day is 24 hours, a week seven days; a month is
 * run_at's day of the month (the month's last when it has fewer) at run_at's time of day, UTC,
 * counted from run_at itself, not from the occurrence before.
 */
export function occurrenceMs(runAtMs: number, repeat: Repeat, n: number): number {
  if (n === 1 || repeat === null) return runAtMs;
  if (repeat.every !== 'month') return runAtMs + (n - 1) * (repeat.every === 'week' ? 7 : 1) * 86_400_000;
  const start = new Date(runAtMs);
  const months = start.getUTCMonth() + n - 1;
  const year = start.getUTCFullYear() + Math.floor(months / 12);
  const month = months % 12;
  const timeOfDay = runAtMs - Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  return Date.UTC(year, month, Math.min(start.getUTCDate(), daysIn(year, month))) + timeOfDay;
}

const zero = () => new Money(0);

export class ClockModel {
  /** Each clock's time. */
  readonly nowMs: number[];
  readonly holds: ModelHold[] = [];
  readonly quotes: ModelQuote[] = [];
  readonly schedules: ModelSchedule[] = [];
  private readonly available = new Map<string, Amount>();
  private readonly held = new Map<string, Amount>();

  /** `clockOf[a]`: the clock account `a` lives on. */
  constructor(startsMs: number[], readonly clockOf: number[]) { this.nowMs = [...startsMs]; }

  balance(account: number, currency: string): { available: Amount; held: Amount } {
    const key = `${account}|${currency}`;
    return { available: this.available.get(key) ?? zero(), held: this.held.get(key) ?? zero() };
  }

  private move(account: number, currency: string, available: Amount, held: Amount = zero()): void {
    const key = `${account}|${currency}`;
    this.available.set(key, (this.available.get(key) ?? zero()).plus(available));
    this.held.set(key, (this.held.get(key) ?? zero()).plus(held));
  }

  nowOf(account: number): number { return this.nowMs[this.clockOf[account]]; }

  fund(account: number, currency: string, amount: Amount): void { this.move(account, currency, amount); }

  /** A hold as the service must decide it: made when available covers it, else insufficient_funds. */
  holdOutcome(account: number, currency: string, amount: Amount): 'created' | 'insufficient_funds' {
    return this.balance(account, currency).available.isGreaterThanOrEqualTo(amount) ? 'created' : 'insufficient_funds';
  }

  hold(id: string, account: number, currency: string, amount: Amount, expiresAtMs: number): ModelHold {
    const hold: ModelHold = { id, account, currency, amount, expiresAtMs, status: 'active' };
    this.move(account, currency, amount.negated(), amount);
    this.holds.push(hold);
    return hold;
  }

  /** A hold ended (voided, or expired at its instant): all it held back to available. */
  release(hold: ModelHold, how: 'expired' | 'voided'): void {
    hold.status = how;
    this.move(hold.account, hold.currency, hold.amount, hold.amount.negated());
  }

  /** A quote made now on the account's clock: it expires QUOTE_TTL_MS later on that clock. */
  quote(id: string, account: number, from: string, to: string, fromAmount: Amount, toAmount: Amount): ModelQuote {
    const quote: ModelQuote = { id, account, from, to, fromAmount, toAmount, expiresAtMs: this.nowOf(account) + QUOTE_TTL_MS, state: 'open' };
    this.quotes.push(quote);
    return quote;
  }

  /** An execution as the ledger must decide it, in its order of refusals: expired on the clock, then funds. */
  executeOutcome(quote: ModelQuote): 'executed' | 'quote_expired' | 'insufficient_funds' {
    if (this.nowOf(quote.account) >= quote.expiresAtMs) return 'quote_expired';
    return this.balance(quote.account, quote.from).available.isGreaterThanOrEqualTo(quote.fromAmount) ? 'executed' : 'insufficient_funds';
  }

  execute(quote: ModelQuote): void {
    quote.state = 'executed';
    this.move(quote.account, quote.from, quote.fromAmount.negated());
    this.move(quote.account, quote.to, quote.toAmount);
  }

  schedule(schedule: Omit<ModelSchedule, 'runs'>): ModelSchedule {
    const made = { ...schedule, runs: [] };
    this.schedules.push(made);
    return made;
  }

  /** The next occurrence still to run, or null once all have. */
  nextRunMs(schedule: ModelSchedule): number | null {
    const n = schedule.runs.length + 1;
    return n > (schedule.repeat?.count ?? 1) ? null : occurrenceMs(schedule.runAtMs, schedule.repeat, n);
  }

  /** The clock moved to `toMs`: what fell due by then, done in time order. */
  advance(clock: number, toMs: number): Happening[] {
    const happened: Happening[] = [];
    const mine = (account: number) => this.clockOf[account] === clock;
    for (;;) {
      let next: { atMs: number; act: () => Happening } | null = null;
      for (const hold of this.holds) {
        if (hold.status !== 'active' || !mine(hold.account) || hold.expiresAtMs > toMs) continue;
        if (next === null || hold.expiresAtMs < next.atMs) next = { atMs: hold.expiresAtMs, act: () => { this.release(hold, 'expired'); return { kind: 'expired', hold, atMs: hold.expiresAtMs }; } };
      }
      for (const schedule of this.schedules) {
        const atMs = mine(schedule.account) ? this.nextRunMs(schedule) : null;
        if (atMs === null || atMs > toMs) continue;
        if (next === null || atMs < next.atMs) next = { atMs, act: () => ({ kind: 'run', schedule, run: this.run(schedule, atMs) }) };
      }
      if (next === null) break;
      this.nowMs[clock] = next.atMs;
      happened.push(next.act());
    }
    this.nowMs[clock] = toMs;
    return happened;
  }

  snapshot(): ClockSnapshot {
    const keys = [...new Set([...this.available.keys(), ...this.held.keys()])].sort();
    return {
      nowMs: [...this.nowMs],
      balances: Object.fromEntries(keys.map((key) => [key, { available: this.available.get(key)?.toFixed() ?? '0', held: this.held.get(key)?.toFixed() ?? '0' }])),
      holds: this.holds.map(({ id: _id, amount, ...rest }) => ({ ...rest, amount: amount.toFixed() })),
      quotes: this.quotes.map(({ id: _id, fromAmount, toAmount, ...rest }) => ({ ...rest, fromAmount: fromAmount.toFixed(), toAmount: toAmount.toFixed() })),
      schedules: this.schedules.map(({ id: _id, amount, ...rest }) => ({ ...rest, amount: amount.toFixed() })),
    };
  }

  /** One occurrence: a transfer of the schedule's amount when the sender's available covers it then, else refused. */
  private run(schedule: ModelSchedule, atMs: number): ModelRun {
    const covered = this.balance(schedule.account, schedule.currency).available.isGreaterThanOrEqualTo(schedule.amount);
    if (covered) {
      this.move(schedule.account, schedule.currency, schedule.amount.negated());
      this.move(schedule.to, schedule.currency, schedule.amount);
    }
    const run: ModelRun = { occurrence: schedule.runs.length + 1, atMs, status: covered ? 'created' : 'refused', error: covered ? null : 'insufficient_funds' };
    schedule.runs.push(run);
    return run;
  }
}
