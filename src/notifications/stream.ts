// Writes one client's event stream: the preamble, then the events it missed (replayed from
// Postgres after its Last-Event-ID), then live events from its hub subscription, with heartbeat
// comments while idle. The subscription is opened before the replay is read, so an event
// committed during the replay arrives live and nothing falls between the two; the replay marks
// its ids delivered, so the live copy of a replayed event is dropped.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { log } from '../log';
import { SSE_HEARTBEAT, SSE_PREAMBLE, sseComment, toSseFrame } from './frame';
import type { Subscription } from './hub';
import type { StoredEvent } from './store';

/** Events per replay query. */
export const REPLAY_PAGE_SIZE = 500;
/** Events replayed on one connection; past it the stream ends and the client reconnects from its last id. */
export const REPLAY_EVENTS_MAX = 10_000;

export interface Replay {
  /** Outbox position of the client's Last-Event-ID. */
  afterSeq: string;
  page(afterSeq: string, limit: number): Promise<StoredEvent[]>;
}

export interface EventStreamOptions {
  subscription: Subscription;
  replay: Replay | null;
  heartbeatMs: number;
  replayPageSize?: number;
  replayEventsMax?: number;
}

/**
 * The response body of one stream. It ends when the subscription closes (the client fell behind,
 * or shutdown) or the replay bound is reached; destroying it (the client went away) closes the
 * subscription and stops the heartbeat.
 */
export function eventStreamBody(options: EventStreamOptions): PassThrough {
  const { subscription, replay, heartbeatMs } = options;
  const body = new PassThrough();
  const closed = new AbortController();
  const heartbeat = setInterval(() => {
    if (!body.writableNeedDrain) body.write(SSE_HEARTBEAT); // a backed-up client needs no heartbeat
  }, heartbeatMs);
  const stop = () => {
    clearInterval(heartbeat);
    subscription.close('unsubscribed');
    closed.abort();
  };
  body.once('close', stop);

  const write = async (chunk: string): Promise<void> => {
    if (closed.signal.aborted) throw closed.signal.reason;
    if (!body.write(chunk)) await once(body, 'drain', { signal: closed.signal });
  };

  const pump = async (): Promise<string> => {
    await write(SSE_PREAMBLE);
    if (replay) {
      const replayed = await writeReplay(replay, subscription, write, options.replayPageSize ?? REPLAY_PAGE_SIZE, options.replayEventsMax ?? REPLAY_EVENTS_MAX, closed.signal);
      if (replayed === 'truncated') return 'replay limit reached; reconnect with the last event id';
    }
    for (;;) {
      const event = await subscription.next();
      if (!event) return `stream closed: ${subscription.closeReason}`;
      // The events queued with it (a transfer's come in one batch) go in the same socket write.
      await write(subscription.takeQueued().reduce((frames, queued) => frames + toSseFrame(queued), toSseFrame(event)));
    }
  };

  pump().then(
    (why) => { if (!closed.signal.aborted) body.end(sseComment(why)); },
    (error) => {
      if (closed.signal.aborted) return; // the client went away mid-write
      log.warn({ err: error, accountId: subscription.accountId }, 'event stream failed; the client will reconnect');
      body.end();
    },
  ).finally(stop);
  return body;
}

async function writeReplay(
  replay: Replay, subscription: Subscription, write: (chunk: string) => Promise<void>,
  pageSize: number, eventsMax: number, signal: AbortSignal,
): Promise<'complete' | 'truncated'> {
  let afterSeq = replay.afterSeq;
  for (let replayed = 0; replayed < eventsMax;) {
    if (signal.aborted) throw signal.reason;
    const rows = await replay.page(afterSeq, Math.min(pageSize, eventsMax - replayed));
    for (const row of rows) {
      if (subscription.remember(row.event.id)) await write(toSseFrame(row.event));
    }
    if (rows.length === 0 || rows.length < Math.min(pageSize, eventsMax - replayed)) return 'complete';
    replayed += rows.length;
    afterSeq = rows[rows.length - 1].seq;
  }
  // The bound is reached; whether more exist is learnt by the client's next connection.
  const more = await replay.page(afterSeq, 1);
  return more.length > 0 ? 'truncated' : 'complete';
}
