// The due-runs worker of scheduled transfers (DESIGN.md section 5i), beside the ledger as the hold
// expiry is: every ledger process runs one, and they share the work through the schedules' row
// locks. Each sweep claims the occurrences that fell due, sends their transfers to the ledger,
// records the runs the ledger decided, and sends again the runs it has not decided some time after
// they were sent. How that makes one transfer per occurrence: src/scheduled-transfers/runs.ts.
//
// The sweep starts with the process, so an occurrence that fell due while no ledger ran is run as
// soon as one is back; one missed several times runs each occurrence once, in order, each run
// recording the time it actually ran. The sweep reads the wall's now (src/clock.ts) and leaves out
// the accounts on a test clock: their runs are made as their clock advances (src/test-clocks/advance.ts).
import { wallNow, wallNowMs } from '../../src/clock';
import { ChannelListener } from '../../src/db/channel-listener';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { sendCommands } from './send-commands';
import { SerialSweeps } from './serial-sweeps';
import { claimDueOccurrences, recordDecidedRuns, runsToSendAgain, SCHEDULES_ADDED_CHANNEL, workWaiting } from '../../src/scheduled-transfers/runs';

/** Occurrences claimed per transaction, and claims per sweep: the rest wait for the next sweep. */
const CLAIMED_PER_CLAIM_MAX = 100;
const CLAIMS_PER_SWEEP_MAX = 20;
/** Runs recorded, and runs sent again, per sweep. */
const RUNS_PER_SWEEP_MAX = 500;
/** With nothing due, the longest the worker sleeps: it wakes for a schedule written meanwhile anyway. */
const SWEEP_IDLE_MS_MAX = 30_000;

export interface ScheduledRunSettings {
  /** How often the worker looks for due occurrences and decided runs. */
  sweepMs: number;
  /** A run the ledger has not decided this long after it was sent is sent again (then twice as long, ...). */
  resendAfterMs: number;
  /** The length of a `day` step (a week is seven). */
  dayMs: number;
}

/**
 * One sweep: the runs the ledger decided recorded, due occurrences claimed and sent (one claim
 * after the other, so a schedule's occurrences reach the ledger in order), and the runs left
 * undecided sent again. Returns when there is work again for certain: now when runs wait for the
 * ledger or occurrences were claimed, else the next occurrence's instant (null: none scheduled).
 */
async function sweepScheduledRunsOnce(runtime: Runtime, settings: ScheduledRunSettings): Promise<Date | null> {
  const at = wallNow();
  const waiting = await workWaiting(runtime.db, at);
  if (waiting.pending) await recordDecidedRuns(runtime, at, RUNS_PER_SWEEP_MAX);
  if (waiting.due) {
    for (let claim = 0; claim < CLAIMS_PER_SWEEP_MAX; claim++) {
      const commands = await claimDueOccurrences(runtime.db, at, settings.dayMs, CLAIMED_PER_CLAIM_MAX);
      if (commands.length === 0) break;
      await sendCommands(runtime, commands);
    }
  }
  if (waiting.pending) await sendCommands(runtime, await runsToSendAgain(runtime.db, at, settings.resendAfterMs, RUNS_PER_SWEEP_MAX));
  return waiting.pending || waiting.due ? at : waiting.nextDueAt;
}

/**
 * Sweeps every `sweepMs` while there is work; with none, sleeps until the next occurrence falls
 * due (SWEEP_IDLE_MS_MAX at most), woken when a schedule is written (the insert announces it at
 * commit on SCHEDULES_ADDED_CHANNEL). While those announcements are not heard, it sweeps every
 * `sweepMs`, as it did before it listened. One sweep at a time; a failed sweep is tried again by the next.
 */
export function startScheduledRuns(runtime: Runtime, settings: ScheduledRunSettings): { start(): Promise<void>; stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  const listener = new ChannelListener(runtime.config.databaseUrl, SCHEDULES_ADDED_CHANNEL, {
    notified: () => sweep(),
    // Schedules written while it did not listen are found by this sweep.
    listening: (now) => { if (now) sweep(); },
  }, { changes: 'new scheduled transfers', meanwhile: `looking for due runs every ${settings.sweepMs} ms` });
  /** How long to sleep when the next work is at `nextWorkAt`. */
  const sleepMs = (nextWorkAt: Date | null) => {
    if (!listener.listening) return settings.sweepMs;
    const untilDue = nextWorkAt === null ? SWEEP_IDLE_MS_MAX : nextWorkAt.getTime() - wallNowMs();
    return Math.min(SWEEP_IDLE_MS_MAX, Math.max(settings.sweepMs, untilDue));
  };
  const sweeps = new SerialSweeps(
    () => {
      clearTimeout(timer);
      return sweepScheduledRunsOnce(runtime, settings).catch((error) => {
        log.error({ err: error }, 'scheduled transfer sweep failed; the next sweep tries again');
        return wallNow();
      });
    },
    (nextWorkAt) => { timer = setTimeout(sweep, sleepMs(nextWorkAt)); },
  );
  const sweep = sweeps.sweep;
  return {
    start: async () => {
      await listener.start();
      sweep();
    },
    stop: async () => {
      const ended = sweeps.stop();
      clearTimeout(timer);
      await listener.stop();
      await ended;
    },
  };
}
