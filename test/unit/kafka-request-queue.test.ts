// The kafkajs request queue must not spin a timer while nothing waits (src/kafka/request-queue-fix.ts),
// and must still check its queue when a request waits or a throttle runs.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import '../../src/kafka/client';
import { RequestQueue } from '../../src/kafka/request-queue-fix';

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
