// The advancing worker of test clocks (DESIGN.md section 5i), beside the ledger as the hold expiry
// and the scheduled runs are: every ledger process runs one, and they share the clocks through a
// lease (src/test-clocks/clocks.ts). An advance steps the clock through each instant at which
// something of its accounts falls due, in time order: the clock is set to the instant first, then
// what is due by it is sent to the ledger (hold expiries, each schedule's next occurrence), and the
// worker waits for the ledger to decide it before it steps on, so each is decided at its own
// instant (the ledger decides a clock account's command at its clock's time) and its events carry
// it. Quotes need nothing: a quote reads as expired once the clock is past its expires_at.
// Payments fall due too (a claim link's expiry, a pending payment's deadline), but what they
// record depends on their partner, asked or told first: the partners' side does that
// (consumers/partners/clock-payments.ts) and is handed in as a ClockDueWork, so the worker itself
// calls no partner. The clock stays `advancing` until that work is done as well.
//
// Exactly once: a hold's expiry and a run's transfer have ids derived from the hold and the
// occurrence, and the ledger decides an id once; an occurrence is claimed once (its run's key). A
// worker that dies mid-advance leaves the clock `advancing` at the instant it reached; the next
// worker to claim it sends again the runs left undecided and goes on from there.
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { wallNow, wallNowMs, inClockScope } from '../../src/clock';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { DAY_MS } from '../../src/scheduled-transfers/occurrences';
import { claimDueOccurrences, pendingRunsOfClock, recordDecidedRuns } from '../../src/scheduled-transfers/runs';
import { anyClockAdvancing, claimAdvancingClock, finishAdvance, stepClock, TEST_CLOCK_ADVANCES_CHANNEL, type TestClockRow } from '../../src/test-clocks/clocks';
import { ChannelListener } from '../../src/db/channel-listener';
import { dueHoldExpiries } from './hold-expiry';
import { sendCommands } from './send-commands';
import { SerialSweeps } from './serial-sweeps';

/** How often the worker looks for an advancing clock while it does not hear of advances (TEST_CLOCK_ADVANCES_CHANNEL). */
const SWEEP_EVERY_MS = 200;
/** While it hears them: only for an advance whose worker died (its lease ran out). */
const SWEEP_EVERY_MS_LISTENING = 5_000;
/** A claim lasts this long, renewed at each step: another worker takes an advance over once it ran out. */
const LEASE_MS = 60_000;
/** How long a step waits for the ledger to decide what it sent; past it the advance is taken up again later. */
const DECIDED_WAIT_MS_MAX = 30_000;
const DECIDED_POLL_MS = 20;
/** Steps of one advance: an instant each (a clock's accounts have at most 120 runs a schedule, a hold each one expiry). */
const STEPS_PER_ADVANCE_MAX = 100_000;
/** Occurrences claimed per claim, and runs recorded per step. */
const CLAIMED_PER_CLAIM_MAX = 100;
const RUNS_PER_RECORD_MAX = 500;

/**
 * What else falls due on a clock's accounts as it advances, done by another part of the service:
 * its payments (consumers/partners/clock-payments.ts ClockPayments). Each command's id is derived
 * from what it decides, so sending one again changes nothing.
 */
export interface ClockDueWork {
  /** The earliest instant at which something of it falls due on the clock's accounts, or null. */
  earliestDue(clockId: string): Promise<Date | null>;
  /** The ledger commands of what is due by `at`, each told to whoever must know it first; throws when that cannot be done now. */
  commandsDue(clockId: string, at: Date): Promise<LedgerCommandEnvelope[]>;
}

/** The earlier of two instants, either of which may be absent. */
const earlier = (a: Date | null, b: Date | null): Date | null => (a === null ? b : b === null || a.getTime() <= b.getTime() ? a : b);

/** The earliest instant at which something of the clock's accounts is due: an active hold's expiry, a schedule's next run, the other work's. */
async function nextDue(runtime: Runtime, clockId: string, work: ClockDueWork | null): Promise<Date | null> {
  const holds = inClockScope('h.account_id', clockId);
  const schedules = inClockScope('s.account_id', clockId);
  const { rows } = await runtime.db.raw(
    `SELECT least((SELECT min(h.expires_at) FROM holds h WHERE h.status = 'active' AND ${holds.sql}),
                  (SELECT min(s.next_run_at) FROM scheduled_transfers s WHERE s.status = 'scheduled' AND ${schedules.sql})) AS due`,
    [...holds.bindings, ...schedules.bindings],
  );
  const own = rows[0].due === null ? null : new Date(rows[0].due);
  return earlier(own, work === null ? null : await work.earliestDue(clockId));
}

/** Waits until the ledger has decided every command; throws past DECIDED_WAIT_MS_MAX. */
async function decided(runtime: Runtime, commands: LedgerCommandEnvelope[]): Promise<void> {
  const ids = commands.map((c) => c.id);
  const deadline = wallNowMs() + DECIDED_WAIT_MS_MAX;
  while (ids.length > 0) {
    const { rows } = await runtime.db.raw('SELECT count(*)::int AS n FROM processed_commands WHERE command_id = ANY(?::text[])', [ids]);
    if (rows[0].n === ids.length) return;
    if (wallNowMs() > deadline) throw new Error(`the ledger has not decided ${ids.length - rows[0].n} of ${ids.length} commands of a test clock's step`);
    await new Promise((resolve) => setTimeout(resolve, DECIDED_POLL_MS));
  }
}

/**
 * Every occurrence of the clock's schedules due by `at`, claimed as runs made at `at`. A clock's
 * `day` is a real day: SCHEDULED_TRANSFER_DAY_MS shortens the wall's days only.
 */
async function claimDueRuns(runtime: Runtime, clockId: string, at: Date): Promise<LedgerCommandEnvelope[]> {
  const claimed: LedgerCommandEnvelope[] = [];
  for (;;) {
    const commands = await claimDueOccurrences(runtime.db, at, DAY_MS, CLAIMED_PER_CLAIM_MAX, clockId);
    claimed.push(...commands);
    if (commands.length < CLAIMED_PER_CLAIM_MAX) return claimed;
  }
}

/** What is due at the clock's instant `at`, sent, decided by the ledger, and the runs recorded. */
async function doDue(runtime: Runtime, clockId: string, at: Date, leftOver: LedgerCommandEnvelope[], work: ClockDueWork | null): Promise<void> {
  const commands = [
    ...leftOver, ...await dueHoldExpiries(runtime, at, clockId), ...await claimDueRuns(runtime, clockId, at), ...(work === null ? [] : await work.commandsDue(clockId, at)),
  ];
  await sendCommands(runtime, commands);
  await decided(runtime, commands);
  await recordDecidedRuns(runtime, at, RUNS_PER_RECORD_MAX, clockId);
}

/** Advances a claimed clock to its target, step by step; returns when done or when the claim was lost. */
export async function advanceClaimedClock(runtime: Runtime, clock: TestClockRow, work: ClockDueWork | null = null): Promise<void> {
  const target = clock.advancing_to!;
  let at = clock.frozen_time;
  // Taken over after a crash: the runs sent and left undecided go first, decided and recorded at
  // the instant the clock stands at, where they fell due, before it steps on (the ledger decides
  // each once; stepped first, a run was told at the next step's instant).
  const leftOver = await pendingRunsOfClock(runtime.db, clock.id, at);
  if (leftOver.length > 0) await doDue(runtime, clock.id, at, leftOver, work);
  for (let step = 0; step < STEPS_PER_ADVANCE_MAX; step++) {
    const due = await nextDue(runtime, clock.id, work);
    if (due === null || due.getTime() > target.getTime()) {
      await finishAdvance(runtime.db, clock, wallNow());
      return;
    }
    if (due.getTime() > at.getTime()) {
      at = due;
      if (!(await stepClock(runtime.db, clock, at, new Date(wallNowMs() + LEASE_MS)))) return; // another worker has it
    }
    await doDue(runtime, clock.id, at, [], work);
  }
  throw new Error(`test clock ${clock.id}: more than ${STEPS_PER_ADVANCE_MAX} steps in one advance`);
}

/** Claims and advances advancing clocks, one at a time, until none is left to claim. */
async function sweepOnce(runtime: Runtime, work: ClockDueWork | null): Promise<void> {
  if (!(await anyClockAdvancing(runtime.db))) return;
  for (;;) {
    const clock = await claimAdvancingClock(runtime.db, wallNow(), LEASE_MS);
    if (!clock) return;
    await advanceClaimedClock(runtime, clock, work);
  }
}

/**
 * Sweeps as soon as an advance is announced (the advance's transaction notifies
 * TEST_CLOCK_ADVANCES_CHANNEL at commit), and besides every SWEEP_EVERY_MS_LISTENING for an advance
 * whose worker died, or every SWEEP_EVERY_MS while announcements are not heard. One sweep at a
 * time; one asked for meanwhile runs after it, so an advance announced as a sweep ends is not
 * missed. A failed advance is taken up again once its lease ran out. Without `work` (a ledger
 * started alone, as some tests do) payments are not stepped to.
 */
export function startClockAdvances(runtime: Runtime, work: ClockDueWork | null = null): { start(): Promise<void>; stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  const sweeps = new SerialSweeps(() => sweepOnce(runtime, work)
    .catch((error) => log.error({ err: error }, 'test clock advance failed; it is taken up again once its lease runs out')));
  const sweep = sweeps.sweep;
  const listener = new ChannelListener(runtime.config.databaseUrl, TEST_CLOCK_ADVANCES_CHANNEL, {
    notified: sweep,
    // Advances announced while it did not listen are found by this sweep.
    listening: (now) => { if (now) sweep(); },
  }, { changes: 'test clock advances', meanwhile: `looking for them every ${SWEEP_EVERY_MS} ms` });
  const tick = () => {
    sweep();
    timer = setTimeout(tick, listener.listening ? SWEEP_EVERY_MS_LISTENING : SWEEP_EVERY_MS);
  };
  return {
    start: async () => {
      await listener.start();
      tick();
    },
    stop: async () => {
      const ended = sweeps.stop();
      clearTimeout(timer);
      await listener.stop();
      await ended;
    },
  };
}
