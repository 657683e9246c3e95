// The installed kafkajs carries patches/kafkajs+2.2.4.patch (scripts/patch-dependencies.sh): its
// request queue arms no timer while nothing waits and still checks its queue when a request
// waits or a throttle runs; its producer groups messages by partition in linear time.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const RequestQueue = require('kafkajs/src/network/requestQueue');
const groupMessagesPerPartition = require('kafkajs/src/producer/groupMessagesPerPartition');

const silentLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function newQueue(): any {
  const Queue = RequestQueue as new (options: Record<string, unknown>) => any;
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
  it('is the pinned version the patch was written for', () => {
    assert.equal(require('kafkajs/package.json').version, '2.2.4');
  });

  it('has patches/kafkajs+2.2.4.patch applied in full', () => {
    const root = path.resolve(__dirname, '../../..');
    const reversible = spawnSync('patch', ['--dry-run', '--reverse', '--force', '-p1', '-d', path.join(root, 'node_modules/kafkajs')], {
      input: readFileSync(path.join(root, 'patches/kafkajs+2.2.4.patch')),
    });
    assert.equal(reversible.status, 0, String(reversible.stdout));
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
