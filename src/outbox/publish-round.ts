// Events written outside the ledger's rounds (an endpoint disabled, a reconciliation completed)
// go through the outbox like every event, in the transaction of the change they announce; this
// publishes such a round right after its commit, so readers need not wait for the outbox sweeper,
// which publishes it anyway if Kafka refuses now.
import type { DomainEventEnvelope } from '../../ledger/messages';
import { markRoundsPublished } from './rounds';
import { log } from '../log';
import type { Runtime } from '../runtime';
import { domainEventHeaders, TOPICS } from '../kafka/topics';

export async function publishRound(runtime: Runtime, roundId: string, events: DomainEventEnvelope[]): Promise<void> {
  try {
    const messages = await Promise.all(events.map(async (event) => ({
      key: event.resource_id, value: await runtime.codec.encode(TOPICS.domainEvents, event), headers: domainEventHeaders(event.account_id),
    })));
    await runtime.producer.send({ topic: runtime.names.full(TOPICS.domainEvents), messages });
    await markRoundsPublished(runtime.db, [roundId]);
  } catch (error) {
    log.warn({ err: error, roundId }, 'the round was not published now; the outbox sweeper will publish it');
  }
}
