// kafkajs 2.2.4 (its latest release) re-arms a timer every millisecond on every broker
// connection, whether or not a request waits: RequestQueue.scheduleCheckPendingRequests
// computes a negative delay when nothing is throttled and schedules it anyway. Each consumer
// and producer connection then wakes the event loop about a thousand times a second, which
// here cost an idle service 8-14 % of a core and every busy one the same. The check has
// nothing to do when no request is pending and no throttle is running, so it is skipped
// then; a request that is queued later schedules its own check, and a fulfilled request
// checks the queue again (kafkajs's own paths, unchanged).
import { createRequire } from 'node:module';

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
}

const requireFromHere = createRequire(__filename);
const kafkajsVersion: string = requireFromHere('kafkajs/package.json').version;
const RequestQueue: { prototype: RequestQueueInternals } = requireFromHere('kafkajs/src/network/requestQueue');

/** Installs the fix once; a kafkajs other than the version it was written against is left alone. */
export function fixIdleRequestQueueTimer(): boolean {
  if (kafkajsVersion !== '2.2.4') return false;
  const proto = RequestQueue.prototype as RequestQueueInternals & { idleTimerFixed?: boolean };
  if (proto.idleTimerFixed) return true;
  const schedule = proto.scheduleCheckPendingRequests;
  proto.scheduleCheckPendingRequests = function scheduleWhenSomethingWaits(this: RequestQueueInternals) {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    schedule.call(this);
  };
  proto.idleTimerFixed = true;
  return true;
}

export { RequestQueue };
