// Publishes outbox rounds that a crashed ledger process committed but never published. Rounds
// are claimed with SKIP LOCKED, so several ledger processes can sweep side by side; a message
// published twice is a duplicate that readers drop by its id.
import { claimUnpublishedRound, markRoundsPublished } from '../../ledger/store';
import { log } from '../../src/log';
import { sendBatches } from '../../src/kafka/send-batches';
import { domainEventHeaders, TOPICS } from '../../src/kafka/topics';
import type { Runtime } from '../../src/runtime';
import { toTopicMessages } from './outbox';

const SWEEP_EVERY_MS = 1_000;
const UNPUBLISHED_AGE_MS = 15_000; // younger rounds may still be on their way through the writer's publisher
const ROUNDS_PER_SWEEP_MAX = 20;

/** Publishes up to ROUNDS_PER_SWEEP_MAX forgotten rounds; returns how many. */
export async function sweepOutboxOnce(runtime: Runtime, ageMs = UNPUBLISHED_AGE_MS): Promise<number> {
  let swept = 0;
  while (swept < ROUNDS_PER_SWEEP_MAX) {
    const done = await runtime.db.transaction(async (trx) => {
      const round = await claimUnpublishedRound(trx, ageMs);
      if (!round) return false;
      const events = round.events.map((event) => ({ topic: TOPICS.domainEvents, key: event.resource_id, payload: event, headers: domainEventHeaders(event.account_id) }));
      const topicMessages = await toTopicMessages(runtime, [...round.messages, ...events]);
      await sendBatches(runtime.producer, topicMessages);
      await markRoundsPublished(trx, [round.roundId]);
      return true;
    });
    if (!done) break;
    swept++;
  }
  return swept;
}

export function startOutboxSweeper(runtime: Runtime): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepOutboxOnce(runtime)
      .then((count) => { if (count > 0) log.warn({ rounds: count }, 'published outbox rounds left behind by an earlier process'); })
      .catch((error) => log.error({ err: error }, 'outbox sweep failed'));
  }, SWEEP_EVERY_MS);
  return { stop: async () => { clearInterval(timer); await running; } };
}
