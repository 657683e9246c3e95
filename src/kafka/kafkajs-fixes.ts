// Two fixes to kafkajs 2.2.4, its latest release. This module must load before kafkajs itself
// (src/kafka/client.ts imports it first).
//
// 1. The idle timer. kafkajs re-arms a timer every millisecond on every broker connection,
// whether or not a request waits: RequestQueue.scheduleCheckPendingRequests computes a negative
// delay when nothing is throttled and schedules it anyway. Each consumer and producer
// connection then wakes the event loop about a thousand times a second, which here cost an
// idle service 8-14 % of a core and every busy one the same. The check has nothing to do when
// no request is pending and no throttle is running, so it is skipped then; a request that is
// queued later schedules its own check, and a fulfilled request checks the queue again
// (kafkajs's own paths, unchanged).
//
// 2. Quadratic batching. The producer groups a send's messages by partition by copying each
// partition's array once per message (`[...current, message]`): a ledger round of 10,000
// outbox messages spent over a second of CPU there. The grouping is replaced, before kafkajs
// loads it, by one that appends: same partitions, same order.
import { createRequire } from 'node:module';

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
}

const requireFromHere = createRequire(__filename);
const kafkajsVersion: string = requireFromHere('kafkajs/package.json').version;

type Partitioner = (args: { topic: string; partitionMetadata: unknown[]; message: unknown }) => number;

/** Messages by partition, in their order (what kafkajs's groupMessagesPerPartition returns). */
export function groupMessagesPerPartition({ topic, partitionMetadata, messages, partitioner }: {
  topic: string; partitionMetadata: unknown[]; messages: unknown[]; partitioner: Partitioner;
}): Record<number, unknown[]> {
  const groups: Record<number, unknown[]> = {};
  if (partitionMetadata.length === 0) return groups;
  for (const message of messages) (groups[partitioner({ topic, partitionMetadata, message })] ??= []).push(message);
  return groups;
}

const GROUPING_MODULE = 'kafkajs/src/producer/groupMessagesPerPartition';
const SEND_MESSAGES_MODULE = 'kafkajs/src/producer/sendMessages';

/**
 * Puts the linear grouping in place of kafkajs's module; false when kafkajs's producer was
 * loaded already (it then keeps the quadratic one) or the version differs.
 */
function fixQuadraticGrouping(): boolean {
  if (kafkajsVersion !== '2.2.4') return false;
  if (requireFromHere.cache[requireFromHere.resolve(SEND_MESSAGES_MODULE)]) return false;
  const groupingPath = requireFromHere.resolve(GROUPING_MODULE);
  requireFromHere(groupingPath);
  requireFromHere.cache[groupingPath]!.exports = groupMessagesPerPartition;
  return true;
}

/** A kafkajs other than the version the fix was written against is left alone. */
function fixIdleRequestQueueTimer(queue: { prototype: RequestQueueInternals }): void {
  if (kafkajsVersion !== '2.2.4') return;
  const schedule = queue.prototype.scheduleCheckPendingRequests;
  queue.prototype.scheduleCheckPendingRequests = function scheduleWhenSomethingWaits(this: RequestQueueInternals) {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    schedule.call(this);
  };
}

// Runs once per process (the module cache), before anything loads kafkajs's index.
export const groupingFixed = fixQuadraticGrouping();
export const RequestQueue: { prototype: RequestQueueInternals } = requireFromHere('kafkajs/src/network/requestQueue');
fixIdleRequestQueueTimer(RequestQueue);
