// The seeded plan of the clients on test clocks (DESIGN.md section 5i): how many clocks, how many
// accounts on each, where each clock starts, and the operations of the one client that drives
// them (holds with expiries, FX quotes executed later, one-shot and repeating scheduled transfers,
// advances by steps of seconds to months). One client sends them all, one after the other, so the
// order in which clocks move is the plan's and the model can predict every balance to the cent.
// Their streams are their own: adding them changed no other client's operations.
import { prng } from '../support/prng';
import { streamSeed, type Fiat } from './plan';

const DAY_S = 86_400;
export const DAY_MS = DAY_S * 1_000;

/**
 * Test clocks start in this era (2100 and later), far from any wall instant of a run: the trace
 * writes their instants as they are (trace.ts), so a replay's clocks, which start at the same
 * seeded instants, are sent the same times.
 */
export const CLOCK_ERA_MS = Date.UTC(2100, 0, 1);

/**
 * Instants the plan makes never tie: a hold expires at a whole second plus HOLD_MS, a schedule's
 * runs at a whole second plus RUN_MS and its own number (day, week and month steps keep the
 * milliseconds). Two things due at one instant would be decided in an order the service does not
 * promise; apart, the model knows the order.
 */
export const HOLD_MS = 250;
export const RUN_MS = 500;
/** Fewer schedules than this per run keep their milliseconds apart (RUN_MS + n below a second). */
export const SCHEDULES_MAX = 400;

/** A quote lives thirty seconds on its account's clock (README "FX quotes"). */
export const QUOTE_TTL_MS = 30_000;

export interface ClockPlan { clocks: Array<{ startMs: number; accounts: number }> }

/** One or two clocks of one or two accounts each, at least two accounts in all (a schedule pays another of them). */
export function clockPlan(seed: number): ClockPlan {
  const random = prng(streamSeed(seed, 3_000));
  const clocks = Array.from({ length: random() < 0.5 ? 1 : 2 }, () => ({
    startMs: CLOCK_ERA_MS + Math.floor(random() * 3_650) * DAY_MS + Math.floor(random() * DAY_S) * 1_000,
    accounts: random() < 0.5 ? 1 : 2,
  }));
  if (clocks.reduce((n, c) => n + c.accounts, 0) < 2) clocks[0].accounts = 2;
  return { clocks };
}

export type Repeat = null | { every: 'day' | 'week' | 'month'; count: number };

/** `account` and `to` count the clock accounts of all clocks together, in the plan's order. */
export type ClockOp =
  | { kind: 'clock_fund'; account: number; currency: Fiat; cents: number }
  | { kind: 'clock_hold'; account: number; currency: Fiat; cents: number; expiresInS: number }
  // `executeNow`: executed at once, the clock unmoved; else left to a later clock_execute.
  | { kind: 'clock_quote'; account: number; from: Fiat; to: Fiat; cents: number; executeNow: boolean }
  // `pick` chooses among the quotes not executed yet, whichever exist when it runs.
  | { kind: 'clock_execute'; pick: number }
  | { kind: 'clock_schedule'; account: number; to: number; currency: Fiat; cents: number; runInS: number; repeat: Repeat }
  | { kind: 'clock_advance'; clock: number; stepMs: number };

/** A share of the run's operations: a quarter of one wall client's (an advance can wait seconds for its clock). */
export const clockOpsOf = (ops: number, clients: number): number => Math.max(20, Math.round(ops / clients / 4));

const FIAT: Fiat[] = ['USD', 'EUR', 'GBP'];

/** An endless generator of the clock client's operations. */
export function* clockOps(seed: number, plan: ClockPlan): Generator<ClockOp> {
  const random = prng(streamSeed(seed, 3_001));
  const accounts = plan.clocks.reduce((n, c) => n + c.accounts, 0);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const account = (): number => Math.floor(random() * accounts);
  // Seconds to months, spread evenly over their orders of magnitude.
  const logUniform = (least: number, most: number): number => Math.exp(Math.log(least) + random() * (Math.log(most) - Math.log(least)));
  for (;;) {
    const roll = random();
    if (roll < 0.08) yield { kind: 'clock_fund', account: account(), currency: pick(FIAT), cents: 1 + Math.floor(random() * 100_000) };
    else if (roll < 0.26) {
      // Now and then more than any balance holds: refused for want of funds, as the model says.
      const cents = random() < 0.1 ? 200_000 + Math.floor(random() * 100_000) : 1 + Math.floor(random() * 30_000);
      yield { kind: 'clock_hold', account: account(), currency: pick(FIAT), cents, expiresInS: Math.floor(logUniform(2, 29 * DAY_S)) };
    } else if (roll < 0.36) {
      const from = pick(FIAT);
      yield { kind: 'clock_quote', account: account(), from, to: pick(FIAT.filter((c) => c !== from)), cents: 100 + Math.floor(random() * 20_000), executeNow: random() < 0.4 };
    } else if (roll < 0.46) yield { kind: 'clock_execute', pick: random() };
    else if (roll < 0.72) {
      const from = account();
      const to = (from + 1 + Math.floor(random() * (accounts - 1))) % accounts;
      const every = pick(['day', 'week', 'month', null, null] as const);
      const repeat: Repeat = every === null ? null : { every, count: 1 + Math.floor(random() * (every === 'day' ? 40 : every === 'week' ? 12 : 14)) };
      // Mostly amounts a balance covers for a while, and repeats that outrun it: refused runs.
      const cents = random() < 0.15 ? 50_000 + Math.floor(random() * 100_000) : 1 + Math.floor(random() * 20_000);
      yield { kind: 'clock_schedule', account: from, to, currency: pick(FIAT), cents, runInS: Math.floor(logUniform(2, 200 * DAY_S)), repeat };
    } else yield { kind: 'clock_advance', clock: Math.floor(random() * plan.clocks.length), stepMs: Math.floor(logUniform(1_000, 120 * DAY_MS)) };
  }
}
