// Removes the API's idempotency records once expired (DESIGN.md section 5: keys are remembered 24
// hours); without it idempotency_records grew by every write for good. Only that table is swept:
// the ledger's processed commands are the records of money-moving keys, which stay kept for good.
// Batches are small and paced, so a backlog (after a pause, or the first sweep of a large table)
// never holds many locks nor a long transaction, and the writes beside it keep their speed. Rows
// are claimed with SKIP LOCKED: several API processes sweep side by side, and a claim that is
// taking over an expired record is never waited for.
import type { Db } from '../db';
import { log } from '../log';

export interface SweepSettings {
  /** Records deleted per statement. */
  batchSize: number;
  /** The pause between two full batches. */
  pauseMs: number;
}

export const SWEEP_DEFAULTS: SweepSettings = { batchSize: 1_000, pauseMs: 200 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deletes one batch of expired records; returns how many. */
async function deleteBatch(db: Db, batchSize: number): Promise<number> {
  const { rowCount } = await db.raw(
    `WITH expired AS (
       SELECT scope, idempotency_key FROM idempotency_records WHERE expires_at < now()
        ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)
     DELETE FROM idempotency_records r USING expired e WHERE r.scope = e.scope AND r.idempotency_key = e.idempotency_key`,
    [batchSize],
  );
  return rowCount ?? 0;
}

/**
 * Deletes every record expired now, batch after batch, until a batch comes back short (or
 * `stopping` says so); returns how many records and batches.
 */
export async function sweepExpiredIdempotencyRecords(db: Db, settings: SweepSettings = SWEEP_DEFAULTS, stopping: () => boolean = () => false): Promise<{ deleted: number; batches: number }> {
  let deleted = 0;
  let batches = 0;
  for (;;) {
    const count = await deleteBatch(db, settings.batchSize);
    deleted += count;
    batches++;
    if (count < settings.batchSize || stopping()) return { deleted, batches };
    await sleep(settings.pauseMs);
  }
}

/** Sweeps every `everyMs` (0: never); a sweep still running when the next is due is not doubled. */
export function startIdempotencySweeper(db: Db, everyMs: number, settings: SweepSettings = SWEEP_DEFAULTS): { stop(): Promise<void> } {
  if (everyMs <= 0) return { stop: async () => undefined };
  let stopped = false;
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (running) return;
    running = sweepExpiredIdempotencyRecords(db, settings, () => stopped)
      .then(({ deleted }) => { if (deleted > 0) log.info({ deleted }, 'expired idempotency records removed'); })
      .catch((error) => log.warn({ err: error }, 'idempotency sweep failed; the next one tries again'))
      .finally(() => { running = null; });
  }, everyMs);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
