// Publishes outbox rounds that a crashed ledger process committed but never published. A round is
// claimed by a lease (claims.ts claimUnpublishedRound), sent, then its mark removed: each a
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
//
// A message Kafka can never take as it is (its payload does not fit its topic's schema, the broker
// refuses the record as too large or invalid: src/kafka/permanent.ts) is set aside in
// outbox_set_aside for an operator, and the rest of its round is sent: a round's messages are
// independent of each other (each reader takes its own by id), and holding a partner instruction
// back for a broken ledger entry beside it would leave a transfer executing, its funds held. The
// sweep then goes on with the next rounds. Any other failure (Kafka or the registry away) may pass:
// the round keeps its place and the sweep stops, to try again at the next.
import { permanentEncodingFailure, permanentSendFailure } from '../kafka/permanent';
import { sendBatches } from '../kafka/send-batches';
import { domainEventHeaders, TOPICS } from '../kafka/topics';
import { log } from '../log';
import type { Runtime } from '../runtime';
import { claimUnpublishedRound, releaseRoundClaim, type UnpublishedRound } from './claims';
import { byTopic, encodeMessage, type EncodedMessage, type OutboxMessage } from './encode';
import { setAsideMessages, type SetAsideMessage } from './set-aside';

const SWEEP_EVERY_MS = 1_000;
const UNPUBLISHED_AGE_MS = 15_000; // younger rounds may still be on their way through the writer's publisher
const ROUNDS_PER_SWEEP_MAX = 20;
/** How long a claim keeps other sweepers off a round: longer than a send with its retries takes. */
export const CLAIM_LEASE_MS = 60_000;

/**
 * Sends what Kafka can take of one claimed round and sets the rest aside (why, in the header);
 * removes the round once done. On a failure that may pass, gives the claim up, so the next sweep
 * tries the round again. Returns how many messages were set aside.
 */
async function publishRound(runtime: Runtime, round: UnpublishedRound): Promise<number> {
  const events: OutboxMessage[] = round.events.map((event) => ({ topic: TOPICS.domainEvents, key: event.resource_id, payload: event, headers: domainEventHeaders(event.account_id) }));
  const setAside: SetAsideMessage[] = [];
  try {
    const encoded: EncodedMessage[] = [];
    for (const message of [...round.messages, ...events]) {
      try {
        encoded.push(await encodeMessage(runtime, message));
      } catch (error) {
        const reason = permanentEncodingFailure(error);
        if (!reason) throw error;
        setAside.push({ ...message, reason });
      }
    }
    try {
      await sendBatches(runtime.producer, byTopic(encoded));
    } catch (error) {
      if (!permanentSendFailure(error)) throw error;
      // The broker does not say which record it refused: each goes alone, and those refused are set
      // aside. Those sent before go again; readers drop the duplicates by id.
      for (const item of encoded) {
        try {
          await sendBatches(runtime.producer, byTopic([item]));
        } catch (single) {
          const reason = permanentSendFailure(single);
          if (!reason) throw single;
          setAside.push({ ...item.message, reason });
        }
      }
    }
  } catch (error) {
    await releaseRoundClaim(runtime.db, round.roundId).catch(() => undefined);
    throw error;
  }
  await runtime.db.transaction(async (trx) => {
    await setAsideMessages(trx, round.roundId, setAside);
    await trx('outbox_rounds').where('round_id', round.roundId).delete();
  });
  if (setAside.length > 0) {
    log.error({ roundId: round.roundId, setAside: setAside.length, reasons: [...new Set(setAside.map((m) => m.reason))].slice(0, 5) },
      'outbox messages Kafka cannot take were set aside for an operator (GET /v1/outbox/set-aside); the rest of the round was sent');
  }
  return setAside.length;
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
