// The ledger releases expired holds by itself (DESIGN.md section 5g): a sweep finds active holds
// past their expires_at and sends each a `hold.expire` command on ledger.commands, keyed by its
// account like every command, so the expiry is decided in the ledger's rounds beside the captures
// and voids that may race it, against the locked hold. The command's id is derived from the hold
// (`hold.expire:<hold id>`): however many sweeps, processes or restarts send it, the ledger
// decides it once (processed_commands), and a hold that is no longer active is left as it is.
// The sweep runs at the start too, so a hold that expired while no ledger process ran is released
// as soon as one is back; after that it runs when the earliest active hold falls due, not on a
// fixed beat (HoldExpiry). Holds of accounts on a test clock expire as their clock advances
// (clock-advance.ts), never by this sweep.
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { wallNowMs, inClockScope, wallNow, type ClockScope } from '../../src/clock';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { sendCommands } from './send-commands';

/** Sweeps are at least this far apart: expiry commands sent and not yet decided are sent again by the next. */
const SWEEP_EVERY_MS = 1_000;
/** ... and at most this far apart, whatever is known of the holds' expiries. */
const SWEEP_EVERY_MS_MAX = 10_000;
/** Holds sent per sweep: the rest wait for the next one. */
const HOLDS_PER_SWEEP_MAX = 500;

export const holdExpiryCommandId = (holdId: string): string => `hold.expire:${holdId}`;

/**
 * The expiry commands of the active holds due by `at` of the accounts in the scope (the wall's, or
 * a test clock's), the earliest first, at most HOLDS_PER_SWEEP_MAX.
 */
export async function dueHoldExpiries(runtime: Runtime, at: Date, clockId: ClockScope): Promise<LedgerCommandEnvelope[]> {
  const scope = inClockScope('holds.account_id', clockId);
  const due: Array<{ id: string; account_id: string }> = await runtime.db('holds').where('status', 'active').andWhere('expires_at', '<=', at)
    .andWhereRaw(scope.sql, scope.bindings).orderBy('expires_at').limit(HOLDS_PER_SWEEP_MAX).select('id', 'account_id');
  return due.map((hold) => ({
    id: holdExpiryCommandId(hold.id), type: 'hold.expire', account_id: hold.account_id, reply_to: null, issued_at: at.toISOString(),
    payload: JSON.stringify({ hold_id: hold.id }), idempotency_key: null, fingerprint: null, request_id: null,
  }));
}

/** Sends the expiry command of every due hold of the accounts on no test clock (at most HOLDS_PER_SWEEP_MAX); returns how many. */
export async function sweepExpiredHoldsOnce(runtime: Runtime, now = wallNow()): Promise<number> {
  const commands = await dueHoldExpiries(runtime, now, null);
  await sendCommands(runtime, commands);
  return commands.length;
}

/** The time of the next sweep, given when the earliest active hold expires (null: none is active). */
export function nextSweepDelayMs(earliest: Date | null, now: number, everyMsMin: number, everyMsMax: number): number {
  if (earliest === null) return everyMsMax;
  return Math.min(everyMsMax, Math.max(everyMsMin, earliest.getTime() - now));
}

/**
 * Sweeps when the earliest active hold falls due (its expires_at, read after each sweep), at
 * least every `everyMsMax` and at most every `everyMsMin`; a hold this process's ledger makes
 * with an earlier expiry moves the next sweep forward (`dueAt`). A hold another ledger process
 * made is seen by that process's own sweep, and by this one within `everyMsMax`.
 */
export class HoldExpiry {
  private running: Promise<unknown> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private nextAt = Infinity;
  private again = false;
  private stopped = false;

  constructor(private readonly runtime: Runtime, private readonly everyMsMin = SWEEP_EVERY_MS, private readonly everyMsMax = SWEEP_EVERY_MS_MAX) {}

  start(): this {
    this.sweep();
    return this;
  }

  /** A hold made in this process that expires at `at`: the next sweep comes no later than then. */
  dueAt(at: Date): void {
    if (this.stopped || at.getTime() >= this.nextAt) return;
    this.schedule(at.getTime() - wallNowMs());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.max(0, delayMs);
    this.nextAt = wallNowMs() + delay;
    this.timer = setTimeout(() => this.sweep(), delay);
  }

  /** One sweep at a time; a hold sent and not yet decided is sent again by the next, and decided once. */
  private sweep(): void {
    if (this.stopped) return;
    this.timer = null;
    this.nextAt = Infinity;
    if (this.running) {
      this.again = true; // its time came during a sweep: one more right after it
      return;
    }
    this.running = (async () => {
      let earliest: Date | null = new Date(0); // a failed sweep tries again after everyMsMin
      try {
        await sweepExpiredHoldsOnce(this.runtime);
        const scope = inClockScope('holds.account_id', null);
        const row = await this.runtime.db('holds').where('status', 'active').andWhereRaw(scope.sql, scope.bindings).min({ earliest: 'expires_at' }).first();
        earliest = row?.earliest ? new Date(row.earliest) : null;
      } catch (error) {
        log.error({ err: error }, 'hold expiry sweep failed; the next sweep tries again');
      }
      return earliest;
    })().then((earliest) => {
      this.running = null;
      if (this.stopped) return;
      const delay = this.again ? 0 : nextSweepDelayMs(earliest, wallNowMs(), this.everyMsMin, this.everyMsMax);
      this.again = false;
      // A hold made during the sweep may have asked for an earlier one already.
      if (wallNowMs() + delay < this.nextAt) this.schedule(delay);
    });
  }
}
