// Writes one client's event stream: the preamble, then the events it missed (replayed from
// Postgres after its Last-Event-ID), then live events from its hub subscription, with heartbeat
// comments while idle. Events go out in the account's sequence (account_seq: gapless, in commit
// order), once each: live events arrive from several Kafka partitions and may come early, late or
// twice, so an event ahead of a gap waits for the missing ones, briefly, and a gap Kafka does not
// fill in time is read from Postgres. The subscription is opened before the replay is read, so
// nothing falls between replay and live.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { log } from '../log';
import { SSE_HEARTBEAT, SSE_PREAMBLE, sseComment, toSseFrame } from './frame';
import type { Subscription } from './hub';
import type { StoredEvent } from './store';

/** Events per replay query. */
export const REPLAY_PAGE_SIZE = 500;
/** Events replayed on one connection; past it the stream ends and the client reconnects from its last id. */
export const REPLAY_EVENTS_MAX = 10_000;
/** How long an event ahead of a gap waits for the missing ones from Kafka before Postgres is asked. */
export const GAP_WAIT_MS = 250;
/** Events held ahead of a gap; past it the stream ends and the client reconnects from its last id. */
export const HELD_EVENTS_MAX = 1_000;

export interface History {
  /** The number of the last event the client has: its Last-Event-ID's, or the account's latest when it named none. */
  afterSeq: number;
  /** True when the client named a Last-Event-ID: the events after it are replayed first. */
  replay: boolean;
  page(afterSeq: number, limit: number): Promise<StoredEvent[]>;
}

export interface EventStreamOptions {
  subscription: Subscription;
  history: History;
  heartbeatMs: number;
  replayPageSize?: number;
  replayEventsMax?: number;
  gapWaitMs?: number;
}

/**
 * The response body of one stream. It ends when the subscription closes (the client fell behind,
 * or shutdown) or the replay bound is reached; destroying it (the client went away) closes the
 * subscription and stops the heartbeat.
 */
export function eventStreamBody(options: EventStreamOptions): PassThrough {
  const { subscription, history, heartbeatMs } = options;
  const pageSize = options.replayPageSize ?? REPLAY_PAGE_SIZE;
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
    let last = history.afterSeq;
    if (history.replay) {
      const replayed = await writeReplay(history, subscription, write, pageSize, options.replayEventsMax ?? REPLAY_EVENTS_MAX, closed.signal);
      if (replayed.outcome === 'truncated') return 'replay limit reached; reconnect with the last event id';
      last = replayed.last;
    }
    const held = new Map<number, DomainEventEnvelope>(); // events ahead of `last + 1`, by number
    for (;;) {
      let frames = '';
      for (let event = held.get(last + 1); event; event = held.get(last + 1)) {
        held.delete(++last);
        frames += toSseFrame(event);
      }
      if (frames) await write(frames); // a transfer's events go in one socket write
      const next = await subscription.nextWithin(held.size > 0 ? options.gapWaitMs ?? GAP_WAIT_MS : undefined);
      if (next === null) return `stream closed: ${subscription.closeReason}`;
      if (next === 'timeout') {
        last = await fillGap(history, held, last, pageSize);
        continue;
      }
      for (const event of [next, ...subscription.takeQueued()]) {
        if (!event.account_seq) await write(toSseFrame(event)); // numbered before this release: as it comes
        else if (event.account_seq > last) held.set(event.account_seq, event);
      }
      if (held.size > HELD_EVENTS_MAX) return 'stream fell behind; reconnect with the last event id';
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

/**
 * Reads from Postgres the events between `last` and the first held one. A number that is not
 * there either cannot be waited for (an event is published only after it and its predecessors
 * committed): it is skipped, logged, rather than stall the stream. Returns the new `last`.
 */
async function fillGap(history: History, held: Map<number, DomainEventEnvelope>, last: number, pageSize: number): Promise<number> {
  const firstHeld = Math.min(...held.keys());
  const rows = await history.page(last, Math.min(pageSize, firstHeld - last - 1));
  for (const row of rows) if (row.seq > last && row.seq < firstHeld) held.set(row.seq, row.event);
  if (held.has(last + 1)) return last;
  log.warn({ from: last + 1, to: firstHeld - 1 }, 'events missing from the account sequence were skipped');
  return firstHeld - 1;
}

async function writeReplay(
  history: History, subscription: Subscription, write: (chunk: string) => Promise<void>,
  pageSize: number, eventsMax: number, signal: AbortSignal,
): Promise<{ outcome: 'complete' | 'truncated'; last: number }> {
  let last = history.afterSeq;
  for (let replayed = 0; replayed < eventsMax;) {
    if (signal.aborted) throw signal.reason;
    const rows = await history.page(last, Math.min(pageSize, eventsMax - replayed));
    for (const row of rows) {
      if (subscription.remember(row.event.id)) await write(toSseFrame(row.event));
      last = row.seq;
    }
    if (rows.length === 0 || rows.length < Math.min(pageSize, eventsMax - replayed)) return { outcome: 'complete', last };
    replayed += rows.length;
  }
  // The bound is reached; whether more exist is learnt by the client's next connection.
  const more = await history.page(last, 1);
  return { outcome: more.length > 0 ? 'truncated' : 'complete', last };
}
