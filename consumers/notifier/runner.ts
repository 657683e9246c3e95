// The notifier (DESIGN.md section 3): reads domain.events and hands each event to this process's
// NotificationHub, which fans it out to the account's open event streams. Every process must
// see every event (its clients may belong to any account), so each joins a consumer group of
// its own, starting at the newest offset: what happened before is replayed from Postgres by
// clients that reconnect with Last-Event-ID, not from Kafka.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { fanOutFetch, startConsumer } from '../../src/kafka/consumer';
import type { KafkaMessage } from 'kafkajs';
import { ACCOUNT_ID_HEADER, TOPICS } from '../../src/kafka/topics';
import { log } from '../../src/log';
import type { NotificationHub } from '../../src/notifications/hub';
import type { RunningRole, Runtime } from '../../src/runtime';

/**
 * Whether this process decodes an event: only those of accounts with an open stream here. An
 * event without the header (published before it existed, or an operator event) is decoded.
 */
export function acceptsEventFor(hub: NotificationHub): (headers: KafkaMessage['headers']) => boolean {
  return (headers) => {
    const accountId = headers?.[ACCOUNT_ID_HEADER];
    return accountId === undefined || hub.subscriberCount(String(accountId)) > 0;
  };
}

/** A group no other process shares: `<prefix>notifier.<host>.<pid>.<random>`. */
export const notifierGroupId = (prefix: string): string => `${prefix}notifier.${os.hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`;

/** The running notifier; `hub` is the process's one hub, which the api role's streams subscribe to. */
export interface NotifierRole extends RunningRole {
  role: 'notifier';
  hub: NotificationHub;
  groupId: string;
}

export async function startNotifier(runtime: Runtime, hub: NotificationHub): Promise<NotifierRole> {
  const groupId = notifierGroupId(runtime.names.prefix);
  const consumer = await startConsumer<DomainEventEnvelope>(runtime, {
    groupId,
    topic: TOPICS.domainEvents,
    fromBeginning: false,
    accepts: acceptsEventFor(hub),
    // A consumer restarted in this process reads up to this much again: streams drop events they already sent (by id).
    commitIntervalMs: 1_000,
    // A stream may lag by the fetch's wait: it gathers some events rather than returning with each one.
    ...fanOutFetch(runtime.config.eventFetchWaitMs),
    // Publishing to the hub only queues in memory and never fails for a transient reason.
    handleBatch: async (messages) => {
      for (const message of messages) hub.publish(message.value);
    },
  });
  return {
    role: 'notifier',
    hub,
    groupId,
    stop: async () => {
      // Without the notifier the streams would go quiet: end them, so clients reconnect elsewhere.
      hub.closeAll();
      await consumer.disconnect();
      // The group is this process's alone and is never joined again: remove it so the broker
      // does not keep one per process start.
      await runtime.admin.deleteGroups([groupId]).catch((error) => log.warn({ err: error, groupId }, 'notifier consumer group not deleted'));
    },
  };
}
