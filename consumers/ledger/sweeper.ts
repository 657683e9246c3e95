// Publishes outbox rows that a crashed ledger process committed but never published. Rows are
// claimed with SKIP LOCKED, so several ledger processes can sweep side by side; a row published
// twice is a duplicate that readers drop by its id.
import { claimUnpublished, markPublished } from '../../ledger/store';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { toTopicMessages } from './outbox';

const SWEEP_EVERY_MS = 1_000;
const UNPUBLISHED_AGE_MS = 2_000; // younger rows are still being published by their writer
const SWEEP_BATCH_MAX = 500;

export async function sweepOutboxOnce(runtime: Runtime, ageMs = UNPUBLISHED_AGE_MS): Promise<number> {
  return runtime.db.transaction(async (trx) => {
    const rows = await claimUnpublished(trx, ageMs, SWEEP_BATCH_MAX);
    if (rows.length === 0) return 0;
    const topicMessages = await toTopicMessages(runtime, rows.map((r) => ({ topic: r.topic, key: r.message_key, payload: r.payload })));
    await runtime.producer.sendBatch({ topicMessages, acks: -1 });
    await markPublished(trx, rows.map((r) => r.seq));
    return rows.length;
  });
}

export function startOutboxSweeper(runtime: Runtime): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepOutboxOnce(runtime)
      .then((count) => { if (count > 0) log.warn({ count }, 'published outbox rows left behind by an earlier process'); })
      .catch((error) => log.error({ err: error }, 'outbox sweep failed'));
  }, SWEEP_EVERY_MS);
  return { stop: async () => { clearInterval(timer); await running; } };
}
