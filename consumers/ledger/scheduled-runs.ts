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
import { wallNow } from '../../src/clock';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { sendCommands } from './send-commands';
import { claimDueOccurrences, recordDecidedRuns, runsToSendAgain, workWaiting } from '../../src/scheduled-transfers/runs';

/** Occurrences claimed per transaction, and claims per sweep: the rest wait for the next sweep. */
const CLAIMED_PER_CLAIM_MAX = 100;
const CLAIMS_PER_SWEEP_MAX = 20;
/** Runs recorded, and runs sent again, per sweep. */
const RUNS_PER_SWEEP_MAX = 500;

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
 * undecided sent again.
 */
async function sweepScheduledRunsOnce(runtime: Runtime, settings: ScheduledRunSettings): Promise<void> {
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
}

/** Sweeps every `sweepMs`, one sweep at a time; a failed sweep is tried again by the next. */
export function startScheduledRuns(runtime: Runtime, settings: ScheduledRunSettings): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const sweep = () => {
    running ??= sweepScheduledRunsOnce(runtime, settings)
      .catch((error) => log.error({ err: error }, 'scheduled transfer sweep failed; the next sweep tries again'))
      .finally(() => { running = null; });
  };
  sweep();
  const timer = setInterval(sweep, settings.sweepMs);
  return { stop: async () => { clearInterval(timer); await running; } };
}
