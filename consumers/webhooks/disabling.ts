// Disables an endpoint the dispatcher gave up on (it answered 410 Gone, or has failed for the
// configured time) and announces it with a `webhook_endpoint.disabled` event of the account, in
// the same transaction: the event takes the account's next sequence number through the outbox,
// like every event, and reaches Kafka, the event streams and the account's other endpoints.
import { randomUUID } from 'node:crypto';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { writeOutboxRound } from '../../src/outbox/rounds';
import { publishRound } from '../../src/outbox/publish-round';
import { TOPICS } from '../../src/kafka/topics';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import type { WebhookEndpointRow } from '../../src/webhooks/endpoints';
import { wallNow } from '../../src/clock';

/** Disables the endpoint if it is enabled; true when this call did it (and announced it). */
export async function disableEndpoint(runtime: Runtime, endpointId: string, reason: string): Promise<boolean> {
  const roundId = randomUUID();
  const now = wallNow();
  const envelope = await runtime.db.transaction(async (trx) => {
    const [endpoint]: WebhookEndpointRow[] = await trx('webhook_endpoints').where({ id: endpointId, enabled: true })
      .update({ enabled: false, disabled_reason: reason, updated_at: now }).returning('*');
    if (!endpoint) return null;
    const event: DomainEventEnvelope = {
      id: randomUUID(), type: 'webhook_endpoint.disabled', created_at: now.toISOString(), environment: runtime.config.environment,
      resource_type: 'webhook_endpoint', resource_id: endpoint.id, account_id: endpoint.account_id, account_seq: 0,
      data: { id: endpoint.id, status: 'disabled', amount: null, currency: null, attributes: JSON.stringify({ url: endpoint.url, reason }) },
    };
    await writeOutboxRound(trx, roundId, [{ id: event.id, topic: TOPICS.domainEvents, key: endpoint.id, accountId: endpoint.account_id, payload: event }]);
    return event;
  });
  if (!envelope) return false;
  log.warn({ endpointId, reason }, 'webhook endpoint disabled');
  await publishRound(runtime, roundId, [envelope]);
  return true;
}
