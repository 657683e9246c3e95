// The webhook dispatcher role (DESIGN.md section 5d): reads domain.events in a consumer group of
// its own (every dispatcher process shares it, so each event is taken by one of them), records
// each event's deliveries to the account's endpoints that want it, commits the offsets once they
// are recorded, and sends them (dispatcher.ts). The group starts at the topic's beginning: an
// endpoint only receives events made after it was registered, so reading old events delivers
// nothing twice.
import { WEBHOOK_EVENT_TYPES } from '../../ledger/event-types';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { fanOutFetch, startConsumer } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import { toPublicEvent } from '../../src/notifications/frame';
import type { RunningRole, Runtime } from '../../src/runtime';
import { SecretVault } from '../../src/vault';
import { WebhookDeliveries, type EventToDeliver } from '../../src/webhooks/deliveries';
import { EndpointCache } from '../../src/webhooks/endpoint-cache';
import { WebhookEndpoints } from '../../src/webhooks/endpoints';
import { WebhookDispatcher } from './dispatcher';

/** How long past its timeout an attempt's claim holds: the time to record what it got. */
const LEASE_MARGIN_MS = 5_000;
/** Attempts under way in one dispatcher, and per endpoint. */
const CONCURRENCY = 128;
export const PER_ENDPOINT = 16;
const COMMIT_INTERVAL_MS = 1_000;

const DELIVERED_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

/** An event of an account's sequence, as the body every attempt sends: the envelope SSE sends too. */
function toDelivery(envelope: DomainEventEnvelope): EventToDeliver | null {
  if (!DELIVERED_TYPES.has(envelope.type) || !envelope.account_id) return null;
  return {
    id: envelope.id, type: envelope.type, accountId: envelope.account_id, createdAt: new Date(envelope.created_at),
    accountSeq: envelope.account_seq || null, body: JSON.stringify(toPublicEvent(envelope)),
  };
}

export async function startWebhookDispatcher(runtime: Runtime): Promise<RunningRole> {
  const { config } = runtime;
  const endpoints = new WebhookEndpoints(runtime.db, new SecretVault(config.webhookSecretKey, 'webhook-secret-vault'));
  const endpointCache = new EndpointCache(runtime.db, config.databaseUrl);
  await endpointCache.start();
  const dispatcher = new WebhookDispatcher(runtime, new WebhookDeliveries(runtime.db, config.webhookTimeoutMs + LEASE_MARGIN_MS), endpoints, endpointCache, {
    timeoutMs: config.webhookTimeoutMs, scheduleMs: config.webhookRetryScheduleMs, disableAfterMs: config.webhookDisableAfterMs,
    pollMs: config.webhookPollMs, concurrency: CONCURRENCY, perEndpoint: PER_ENDPOINT, publicOnly: config.webhookPrivateAddresses === 'refuse',
  });
  dispatcher.start();
  const consumer = await startConsumer<DomainEventEnvelope>(runtime, {
    groupId: `${runtime.names.prefix}webhooks`,
    topic: TOPICS.domainEvents,
    fromBeginning: true,
    // A fan-out reader, not a request path: a fetch waits for some events (fanOutFetch), and
    // offsets are committed once a second, not per partition batch (deliveries are recorded
    // once, so a batch read again after a crash sends nothing twice).
    ...fanOutFetch(config.eventFetchWaitMs),
    commitIntervalMs: COMMIT_INTERVAL_MS,
    handleBatch: async (messages) => {
      await dispatcher.accept(messages.map((message) => toDelivery(message.value)).filter((event): event is EventToDeliver => event !== null));
    },
  });
  return {
    role: 'webhooks',
    stop: async () => {
      await consumer.disconnect();
      await dispatcher.stop();
      await endpointCache.stop();
    },
  };
}
