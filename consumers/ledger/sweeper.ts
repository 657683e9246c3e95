// Publishes outbox rounds that a crashed ledger process committed but never published. A round is
// claimed by a lease (ledger/store.ts claimUnpublishedRound), sent, then its mark removed: each a
// short statement of its own, so no lock is held while Kafka takes its time. A ledger round that
// removes the same mark (the writer's publisher had the round acknowledged meanwhile) holds its
// ledger-account locks while it does, and waited on the sweeper's send when the claim was a row
// lock. Several ledger processes sweep side by side: a claimed round is passed over until its
// lease lapses.
//
// A round may so reach Kafka twice (its publisher and a sweeper, or a sweeper whose lease lapsed
// mid-send). Every reader takes a message once by its id: an event stream drops the ids it
// recently delivered (src/notifications/hub.ts), webhook deliveries are unique per endpoint and event id
// (src/webhooks/deliveries.ts), the partner dispatcher submits under the transfer id as reference
// and answers under `partner_result:<transfer_id>`, which the ledger decides once
// (processed_commands), and ledger entries carry the entry's id for readers outside.
import { claimUnpublishedRound, markRoundsPublished, releaseRoundClaim, type UnpublishedRound } from '../../ledger/store';
import { log } from '../../src/log';
import { sendBatches } from '../../src/kafka/send-batches';
import { domainEventHeaders, TOPICS } from '../../src/kafka/topics';
import type { Runtime } from '../../src/runtime';
import { toTopicMessages } from './outbox';

const SWEEP_EVERY_MS = 1_000;
const UNPUBLISHED_AGE_MS = 15_000; // younger rounds may still be on their way through the writer's publisher
const ROUNDS_PER_SWEEP_MAX = 20;
/** How long a claim keeps other sweepers off a round: longer than a send with its retries takes. */
export const CLAIM_LEASE_MS = 60_000;

/** Sends one claimed round; on failure gives the claim up, so the next sweep tries it again. */
async function publishRound(runtime: Runtime, round: UnpublishedRound): Promise<void> {
  try {
    const events = round.events.map((event) => ({ topic: TOPICS.domainEvents, key: event.resource_id, payload: event, headers: domainEventHeaders(event.account_id) }));
    await sendBatches(runtime.producer, await toTopicMessages(runtime, [...round.messages, ...events]));
  } catch (error) {
    await releaseRoundClaim(runtime.db, round.roundId).catch(() => undefined);
    throw error;
  }
  await markRoundsPublished(runtime.db, [round.roundId]);
}

/** Publishes up to ROUNDS_PER_SWEEP_MAX forgotten rounds; returns how many. */
export async function sweepOutboxOnce(runtime: Runtime, ageMs = UNPUBLISHED_AGE_MS): Promise<number> {
  let swept = 0;
  while (swept < ROUNDS_PER_SWEEP_MAX) {
    const round = await claimUnpublishedRound(runtime.db, ageMs, CLAIM_LEASE_MS);
    if (!round) break;
    await publishRound(runtime, round);
    swept++;
  }
  return swept;
}

export function startOutboxSweeper(runtime: Runtime): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    // One sweep at a time: while Kafka is slow, a sweep that is still sending is not joined by more.
    running ??= sweepOutboxOnce(runtime)
      .then((count) => { if (count > 0) log.warn({ rounds: count }, 'published outbox rounds left behind by an earlier process'); })
      .catch((error) => log.error({ err: error }, 'outbox sweep failed'))
      .finally(() => { running = null; });
  }, SWEEP_EVERY_MS);
  return { stop: async () => { clearInterval(timer); await running; } };
}
