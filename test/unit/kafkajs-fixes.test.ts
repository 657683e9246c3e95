// The kafkajs fixes (src/kafka/kafkajs-fixes.ts): the request queue arms no timer while nothing
// waits and still checks its queue when a request waits or a throttle runs; the producer groups
// messages by partition with the linear grouping.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import '../../src/kafka/client';
import { groupingFixed, groupMessagesPerPartition, RequestQueue } from '../../src/kafka/kafkajs-fixes';

const silentLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function newQueue(): any {
  const Queue = RequestQueue as unknown as new (options: Record<string, unknown>) => any;
  return new Queue({
    instrumentationEmitter: new EventEmitter(), maxInFlightRequests: 1, requestTimeout: 1000, enforceRequestTimeout: true,
    clientId: 'test', broker: '127.0.0.1:9092', logger: silentLogger, isConnected: () => true,
  });
}

describe('kafkajs request queue timer', () => {
  it('arms no timer when no request is pending and nothing is throttled', () => {
    const queue = newQueue();
    try {
      queue.scheduleCheckPendingRequests();
      assert.equal(queue.throttleCheckTimeoutId, null);
      queue.checkPendingRequests(); // what a fulfilled request runs: it must not re-arm either
      assert.equal(queue.throttleCheckTimeoutId, null);
    } finally {
      clearTimeout(queue.throttleCheckTimeoutId); // without the fix this timer re-arms itself for ever
      queue.throttleCheckTimeoutId = null;
      queue.scheduleCheckPendingRequests = () => undefined;
    }
  });

  it('still schedules a check while requests wait', () => {
    const queue = newQueue();
    queue.pending.push({ correlationId: 1 });
    queue.scheduleCheckPendingRequests();
    assert.notEqual(queue.throttleCheckTimeoutId, null);
    clearTimeout(queue.throttleCheckTimeoutId);
  });

  it('still schedules a check when a throttle ends in the future', () => {
    const queue = newQueue();
    queue.throttledUntil = Date.now() + 50;
    queue.scheduleCheckPendingRequests();
    assert.notEqual(queue.throttleCheckTimeoutId, null);
    clearTimeout(queue.throttleCheckTimeoutId);
  });
});

describe('kafkajs producer grouping', () => {
  it('is the linear grouping, installed before kafkajs loaded its producer', () => {
    // kafkajs's own module path: what its producer requires.
    const installed = require('kafkajs/src/producer/groupMessagesPerPartition');
    assert.equal(installed, groupMessagesPerPartition);
    assert.equal(groupingFixed, true);
  });

  it('groups messages by the partitioner, in order, and nothing without partitions', () => {
    const messages = Array.from({ length: 10 }, (_, i) => ({ key: String(i) }));
    const partitioner = ({ message }: { message: unknown }) => Number((message as { key: string }).key) % 3;
    const groups = groupMessagesPerPartition({ topic: 't', partitionMetadata: [{}, {}, {}], messages, partitioner });
    assert.deepEqual(Object.keys(groups).sort(), ['0', '1', '2']);
    assert.deepEqual(groups[0].map((m: any) => m.key), ['0', '3', '6', '9']);
    assert.deepEqual(groups[1].map((m: any) => m.key), ['1', '4', '7']);
    assert.deepEqual(groupMessagesPerPartition({ topic: 't', partitionMetadata: [], messages, partitioner }), {});
  });
});
