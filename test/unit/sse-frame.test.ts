// The wire form of GET /v1/notifications (SPEC.md section 6 envelope as server-sent events), and
// the stream writer that orders preamble, replay and live events.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { PassThrough } from 'node:stream';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { SSE_HEARTBEAT, SSE_PREAMBLE, toPublicEvent, toSseFrame } from '../../src/notifications/frame';
import { NotificationHub } from '../../src/notifications/hub';
import type { StoredEvent } from '../../src/notifications/store';
import { eventStreamBody, type History } from '../../src/notifications/stream';
import { EventStreamParser, type SseBlock } from '../../src/event-stream';

const ACCOUNT_ID = '9b2f6a9e-4c1d-4f7e-8a51-0d3c2b1a0f99';

let lastSeq = 0;
/** An event of the account, numbered after the previous one. */
function envelope(overrides: Partial<DomainEventEnvelope['data']> = {}, type = 'transfer.completed'): DomainEventEnvelope {
  const resourceId = randomUUID();
  return {
    id: randomUUID(), type, created_at: '2026-11-22T10:00:00.000Z', environment: 'sandbox',
    resource_type: 'transfer', resource_id: resourceId, account_id: ACCOUNT_ID, account_seq: ++lastSeq,
    data: { id: resourceId, status: 'completed', amount: '10.00', currency: 'USD', attributes: null, ...overrides },
  };
}

describe('toSseFrame: one event as a server-sent event (SPEC.md section 6)', () => {
  it('writes id, event and one data line of the envelope, ended by a blank line', () => {
    const event = envelope({ attributes: JSON.stringify({ note: 'rent', recipient_email: 'a@example.com' }) });
    const frame = toSseFrame(event);
    const lines = frame.split('\n');
    assert.equal(lines[0], `id: ${event.id}`);
    assert.equal(lines[1], 'event: transfer.completed');
    assert.ok(lines[2].startsWith('data: '));
    assert.deepEqual(lines.slice(3), ['', ''], 'a frame ends with one blank line');
    assert.deepEqual(JSON.parse(lines[2].slice('data: '.length)), {
      id: event.id, type: 'transfer.completed', created_at: '2026-11-22T10:00:00.000Z', environment: 'sandbox',
      resource_type: 'transfer', resource_id: event.resource_id, account_seq: event.account_seq,
      data: { id: event.resource_id, status: 'completed', amount: '10.00', currency: 'USD', note: 'rent', recipient_email: 'a@example.com' },
    });
  });

  it('leaves out the account id: a stream only ever carries its own account', () => {
    assert.equal('account_id' in toPublicEvent(envelope()), false);
  });

  // [what, data overrides, expected data (without id)]
  const dataTable: Array<[string, Partial<DomainEventEnvelope['data']>, Record<string, unknown>]> = [
    ['amount and currency when set', {}, { status: 'completed', amount: '10.00', currency: 'USD' }],
    ['no amount or currency when null (balance-less events)', { amount: null, currency: null }, { status: 'completed' }],
    ['amounts stay decimal strings', { amount: '0.000001', currency: 'USDC' }, { status: 'completed', amount: '0.000001', currency: 'USDC' }],
    ['the attributes merged in', { attributes: '{"failure_code":"partner_error","fee":"0.50"}' }, { status: 'completed', amount: '10.00', currency: 'USD', failure_code: 'partner_error', fee: '0.50' }],
    ['the named fields winning over attributes of the same name', { attributes: '{"status":"forged","amount":"99.00","extra":true}' }, { status: 'completed', amount: '10.00', currency: 'USD', extra: true }],
    ['an attribute filling an absent amount', { amount: null, currency: null, attributes: '{"amount":"5.00"}' }, { status: 'completed', amount: '5.00' }],
    ['nothing from attributes that are not a JSON object', { attributes: '[1,2]' }, { status: 'completed', amount: '10.00', currency: 'USD' }],
    ['nothing from attributes that are not JSON', { attributes: '{not json' }, { status: 'completed', amount: '10.00', currency: 'USD' }],
    ['nothing from JSON null attributes', { attributes: 'null' }, { status: 'completed', amount: '10.00', currency: 'USD' }],
    ['the resource\'s metadata when it has it', { metadata: { order_id: 'A-17' } }, { status: 'completed', amount: '10.00', currency: 'USD', metadata: { order_id: 'A-17' } }],
    ['metadata {} when it has none', { metadata: {} }, { status: 'completed', amount: '10.00', currency: 'USD', metadata: {} }],
    ['no metadata for a resource without (null)', { metadata: null }, { status: 'completed', amount: '10.00', currency: 'USD' }],
    ['the metadata winning over an attribute of its name', { metadata: { a: 'b' }, attributes: '{"metadata":{"forged":"x"}}' }, { status: 'completed', amount: '10.00', currency: 'USD', metadata: { a: 'b' } }],
  ];
  for (const [what, overrides, expected] of dataTable) {
    it(`data has ${what}`, () => {
      const event = envelope(overrides);
      assert.deepEqual(toPublicEvent(event).data, { id: event.resource_id, ...expected });
    });
  }

  it('keeps the data on one line whatever the strings hold, and no field can be injected', () => {
    const event = envelope({ attributes: JSON.stringify({ note: 'line one\nid: forged\r\n\nevent: x' }) }, 'transfer.completed\nid: forged');
    const frames = new EventStreamParser().push(toSseFrame(event));
    assert.equal(frames.length, 1);
    const [frame] = frames;
    assert.equal(frame.id, event.id);
    assert.equal(frame.event, 'transfer.completedid: forged');
    assert.equal(JSON.parse(frame.data!).data.note, 'line one\nid: forged\r\n\nevent: x');
  });

  it('starts each stream with the reconnection delay and an opening comment', () => {
    assert.deepEqual(new EventStreamParser().push(SSE_PREAMBLE), [
      { id: null, event: null, data: null, retryMs: 2000, comments: [] },
      { id: null, event: null, data: null, retryMs: null, comments: ['connected'] },
    ]);
    assert.deepEqual(new EventStreamParser().push(SSE_HEARTBEAT)[0].comments, ['heartbeat']);
  });
});

/** Collects what a stream body writes, parsed into frames. */
function reader(body: PassThrough): { frames: SseBlock[]; ended: Promise<void> } {
  const frames: SseBlock[] = [];
  const parser = new EventStreamParser();
  body.setEncoding('utf8');
  body.on('data', (chunk: string) => frames.push(...parser.push(chunk)));
  return { frames, ended: new Promise((resolve) => body.once('end', () => resolve())) };
}

async function until(condition: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * The account's history over an in-memory outbox: after `events[afterIndex]` and replayed, or
 * (afterIndex null) from the latest event on, live only.
 */
function memoryHistory(events: DomainEventEnvelope[], afterIndex: number | null): History & { pages: number } {
  const stored: StoredEvent[] = events.map((event) => ({ seq: event.account_seq, event }));
  const history = {
    afterSeq: afterIndex === null ? events.at(-1)?.account_seq ?? lastSeq : events[afterIndex].account_seq,
    replay: afterIndex !== null,
    pages: 0,
    page: async (afterSeq: number, limit: number) => {
      history.pages++;
      return stored.filter((s) => s.seq > afterSeq).slice(0, limit);
    },
  };
  return history;
}

/** Live only, from the next event on. */
const liveOnly = (): History => ({ afterSeq: lastSeq, replay: false, page: async () => [] });

const eventIds = (frames: SseBlock[]): string[] => frames.filter((f) => f.event !== null).map((f) => f.id!);

describe('eventStreamBody: preamble, replay, then live events', () => {
  it('writes the preamble first, then live events in order', async () => {
    const hub = new NotificationHub();
    const subscription = hub.subscribe(ACCOUNT_ID);
    const body = eventStreamBody({ subscription, history: liveOnly(), heartbeatMs: 60_000 });
    const { frames } = reader(body);
    const live = [envelope(), envelope(), envelope()];
    live.forEach((e) => hub.publish(e));
    await until(() => eventIds(frames).length === 3, 'three events');
    assert.equal(frames[0].retryMs, 2000);
    assert.deepEqual(frames[1].comments, ['connected']);
    assert.deepEqual(eventIds(frames), live.map((e) => e.id));
    body.destroy();
  });

  it('replays the events after the cursor page by page, then drops the live copies of replayed events', async () => {
    const hub = new NotificationHub();
    const outbox = Array.from({ length: 12 }, () => envelope());
    const subscription = hub.subscribe(ACCOUNT_ID);
    // Published while the stream is opening: buffered in the subscription, and also in the outbox.
    hub.publish(outbox[10]);
    hub.publish(outbox[11]);
    const replay = memoryHistory(outbox, 2); // the client saw outbox[0..2]
    const body = eventStreamBody({ subscription, history: replay, heartbeatMs: 60_000, replayPageSize: 4 });
    const { frames } = reader(body);
    await until(() => eventIds(frames).length === 9, 'the replay');
    const fresh = envelope();
    hub.publish(outbox[5]); // a late re-publication of a replayed event
    hub.publish(fresh);
    await until(() => eventIds(frames).length === 10, 'the live event');
    assert.deepEqual(eventIds(frames), [...outbox.slice(3).map((e) => e.id), fresh.id]);
    assert.equal(replay.pages, 3, 'pages of 4, 4 and 1');
    body.destroy();
  });

  it('ends the stream at the replay bound, so the client reconnects from its last id', async () => {
    const hub = new NotificationHub();
    const outbox = Array.from({ length: 8 }, () => envelope());
    const subscription = hub.subscribe(ACCOUNT_ID);
    const body = eventStreamBody({ subscription, history: memoryHistory(outbox, 0), heartbeatMs: 60_000, replayPageSize: 2, replayEventsMax: 5 });
    const { frames, ended } = reader(body);
    await ended;
    assert.deepEqual(eventIds(frames), outbox.slice(1, 6).map((e) => e.id));
    assert.match(frames.at(-1)!.comments[0], /replay limit reached/);
    assert.equal(hub.subscriberCount(ACCOUNT_ID), 0);
  });

  it('goes live when the replay ends exactly at the bound', async () => {
    const hub = new NotificationHub();
    const outbox = Array.from({ length: 6 }, () => envelope());
    const subscription = hub.subscribe(ACCOUNT_ID);
    const body = eventStreamBody({ subscription, history: memoryHistory(outbox, 0), heartbeatMs: 60_000, replayPageSize: 2, replayEventsMax: 5 });
    const { frames } = reader(body);
    await until(() => eventIds(frames).length === 5, 'the replay');
    const fresh = envelope();
    hub.publish(fresh);
    await until(() => eventIds(frames).length === 6, 'the live event');
    assert.equal(eventIds(frames)[5], fresh.id);
    body.destroy();
  });

  it('writes heartbeat comments while idle', async () => {
    const hub = new NotificationHub();
    const body = eventStreamBody({ subscription: hub.subscribe(ACCOUNT_ID), history: liveOnly(), heartbeatMs: 10 });
    const { frames } = reader(body);
    await until(() => frames.filter((f) => f.comments[0] === 'heartbeat').length >= 2, 'two heartbeats');
    body.destroy();
  });

  it('ends the stream when its subscription falls behind, and unsubscribes when the client goes away', async () => {
    const hub = new NotificationHub({ queueLengthMax: 2, recentIdsMax: 10, subscribersPerAccountMax: 5, subscribersMax: 10 });
    const slow = hub.subscribe(ACCOUNT_ID);
    const slowBody = eventStreamBody({ subscription: slow, history: liveOnly(), heartbeatMs: 60_000 });
    const { frames, ended } = reader(slowBody);
    slowBody.pause(); // nothing is read...
    for (let i = 0; i < 3; i++) hub.publish(envelope()); // ...while three events arrive at once
    slowBody.resume();
    await ended;
    assert.equal(slow.closeReason, 'queue_full');
    assert.match(frames.at(-1)!.comments[0], /queue_full/);

    const gone = hub.subscribe(ACCOUNT_ID);
    const goneBody = eventStreamBody({ subscription: gone, history: liveOnly(), heartbeatMs: 60_000 });
    assert.equal(hub.subscriberCount(ACCOUNT_ID), 1);
    goneBody.destroy();
    await until(() => hub.subscriberCount(ACCOUNT_ID) === 0, 'the unsubscription');
    assert.equal(gone.closeReason, 'unsubscribed');
  });

  it('delivers live events in the account sequence whatever order they arrive in, each once', async () => {
    const hub = new NotificationHub();
    const subscription = hub.subscribe(ACCOUNT_ID);
    const history = liveOnly();
    const [first, second, third] = [envelope(), envelope(), envelope()];
    const body = eventStreamBody({ subscription, history, heartbeatMs: 60_000, gapWaitMs: 5_000 });
    const { frames } = reader(body);
    // Three partitions: the third arrives first, the second twice (an outbox re-publication).
    for (const event of [third, second, { ...second, id: second.id }, first]) hub.publish(event);
    await until(() => eventIds(frames).length === 3, 'three events');
    assert.deepEqual(eventIds(frames), [first.id, second.id, third.id]);
    body.destroy();
  });

  it('reads from Postgres a gap that Kafka does not fill in time, and goes on in sequence', async () => {
    const hub = new NotificationHub();
    const subscription = hub.subscribe(ACCOUNT_ID);
    const before = lastSeq;
    const events = [envelope(), envelope(), envelope(), envelope()];
    const history = memoryHistory(events, null);
    history.afterSeq = before; // the client has seen everything before these four
    const body = eventStreamBody({ subscription, history, heartbeatMs: 60_000, gapWaitMs: 20 });
    const { frames } = reader(body);
    hub.publish(events[0]);
    hub.publish(events[3]); // events[1] and [2] never come live (their partition lags)
    await until(() => eventIds(frames).length === 4, 'the gap filled from the store');
    assert.deepEqual(eventIds(frames), events.map((e) => e.id));
    assert.ok(history.pages >= 1);
    body.destroy();
  });
});
