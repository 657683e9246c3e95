// The event stream GET /v1/notifications (SPEC.md sections 4, 5 and 6) on the running service:
// events are produced the way the ledger produces them (an outbox row, and the same envelope
// Avro-encoded on domain.events keyed by resource id) and read back as server-sent events.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { NotifierRole } from '../../consumers/notifier/runner';
import type { DomainEventEnvelope } from '../../ledger/messages';
import type { NotificationHub } from '../../src/notifications/hub';
import { TOPICS } from '../../src/kafka/topics';
import type { Runtime } from '../../src/runtime';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { startService } from '../support/service';
import type { SseBlock } from '../../src/event-stream';
import { openEventStream, type EventStreamClient } from '../support/sse';

const NOTIFIER_LIVE_MS_MAX = 30_000;
const EVENT_WAIT_MS = 10_000;

interface EmitOptions {
  resourceId?: string;
  type?: string;
  status?: string;
  /** false: the row is only in the outbox (published while no stream was open), never on Kafka now. */
  kafka?: boolean;
}

describe('GET /v1/notifications: the account\'s event stream (SPEC.md section 6)', function () {
  this.timeout(60_000);
  let baseUrl: string;
  let runtime: Runtime;
  let hub: NotificationHub;
  const streams: EventStreamClient[] = [];

  const open = async (token: string, options: Parameters<typeof openEventStream>[2] = {}): Promise<EventStreamClient> => {
    const stream = await openEventStream(baseUrl, token, options);
    streams.push(stream);
    return stream;
  };

  /** Writes an event as the ledger does: an outbox row, then the envelope on domain.events. */
  async function emit(accountId: string, options: EmitOptions = {}): Promise<DomainEventEnvelope> {
    const resourceId = options.resourceId ?? randomUUID();
    const status = options.status ?? 'pending';
    const envelope: DomainEventEnvelope = {
      id: randomUUID(), type: options.type ?? `transfer.${status}`, created_at: new Date().toISOString(), environment: 'sandbox',
      resource_type: 'transfer', resource_id: resourceId, account_id: accountId, account_seq: 0,
      data: { id: resourceId, status, amount: '25.00', currency: 'EUR', attributes: JSON.stringify({ note: 'invoice 42' }) },
    };
    await runtime.db.transaction(async (trx) => {
      const { rows } = await trx.raw(
        `INSERT INTO account_event_sequences AS s (account_id, last_seq) VALUES (?, 1)
         ON CONFLICT (account_id) DO UPDATE SET last_seq = s.last_seq + 1 RETURNING last_seq`, [accountId]);
      envelope.account_seq = Number(rows[0].last_seq);
      await trx('account_events').insert({ account_id: accountId, account_seq: envelope.account_seq, id: envelope.id, payload: envelope });
    });
    if (options.kafka !== false) {
      const value = await runtime.codec.encode(TOPICS.domainEvents, envelope);
      await runtime.producer.send({ topic: runtime.names.full(TOPICS.domainEvents), acks: -1, messages: [{ key: resourceId, value }] });
    }
    return envelope;
  }

  /** The frame is `envelope` as SPEC.md section 6 shows it: id = event id, event = type, data = the envelope. */
  function assertFrameOf(frame: SseBlock, envelope: DomainEventEnvelope): void {
    assert.equal(frame.id, envelope.id);
    assert.equal(frame.event, envelope.type);
    assert.deepEqual(JSON.parse(frame.data!), {
      id: envelope.id, type: envelope.type, created_at: envelope.created_at, environment: 'sandbox',
      resource_type: 'transfer', resource_id: envelope.resource_id, account_seq: envelope.account_seq,
      data: { id: envelope.resource_id, status: envelope.data.status, amount: '25.00', currency: 'EUR', note: 'invoice 42' },
    });
  }

  /** The notifier's consumer group starts at the newest offset once it has joined: wait until it has. */
  async function notifierIsLive(): Promise<void> {
    const probe = await signUp(baseUrl);
    const stream = await open(probe.token);
    const deadline = Date.now() + NOTIFIER_LIVE_MS_MAX;
    while (Date.now() < deadline) {
      await emit(probe.account.id);
      try {
        await stream.nextEvent(1_000);
        stream.close();
        return;
      } catch { /* not yet joined: probe again */ }
    }
    throw new Error(`the notifier did not deliver within ${NOTIFIER_LIVE_MS_MAX} ms`);
  }

  before(async function () {
    this.timeout(NOTIFIER_LIVE_MS_MAX + 10_000);
    const service = testService();
    const notifier = service.roles.find((r) => r.role === 'notifier') as NotifierRole | undefined;
    assert.ok(notifier, 'the test service runs the notifier role');
    ({ baseUrl, runtime } = service);
    hub = notifier.hub;
    await notifierIsLive();
  });

  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });

  it('opens with the SSE headers, a reconnection delay and an opening comment', async () => {
    const alice = await signUp(baseUrl);
    const stream = await open(alice.token);
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(stream.headers.get('cache-control'), 'no-cache, no-transform');
    assert.equal(stream.headers.get('x-accel-buffering'), 'no');
    assert.match(stream.headers.get('request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal((await stream.next()).retryMs, 2000);
    assert.deepEqual((await stream.next()).comments, ['connected']);
  });

  it('delivers the session account\'s events live, in order, each with id = the event id', async () => {
    const alice = await signUp(baseUrl);
    const stream = await open(alice.token);
    const transferId = randomUUID();
    const lifecycle: DomainEventEnvelope[] = [];
    for (const status of ['pending', 'executing', 'completed']) lifecycle.push(await emit(alice.account.id, { resourceId: transferId, status }));
    for (const envelope of lifecycle) assertFrameOf(await stream.nextEvent(EVENT_WAIT_MS), envelope);
  });

  it('never delivers another account\'s events', async () => {
    const alice = await signUp(baseUrl);
    const bob = await signUp(baseUrl);
    const aliceStream = await open(alice.token);
    const bobStream = await open(bob.token);
    const forBob = await emit(bob.account.id);
    assertFrameOf(await bobStream.nextEvent(EVENT_WAIT_MS), forBob); // the hub has fanned it out...
    const forAlice = await emit(alice.account.id);
    assertFrameOf(await aliceStream.nextEvent(EVENT_WAIT_MS), forAlice); // ...and Alice's stream got only her own
    const alsoForBob = await emit(bob.account.id);
    assertFrameOf(await bobStream.nextEvent(EVENT_WAIT_MS), alsoForBob);
    await assert.rejects(aliceStream.nextEvent(500), /timed out/);
  });

  it('serves the master key the stream of the account it names with account_id', async () => {
    const alice = await signUp(baseUrl);
    const { masterKey } = runtime.config;
    const stream = await open(masterKey, { query: `account_id=${alice.account.id}` });
    const envelope = await emit(alice.account.id);
    assertFrameOf(await stream.nextEvent(EVENT_WAIT_MS), envelope);
    expectError(await call(baseUrl, 'GET', '/v1/notifications', undefined, { token: masterKey }), 400, 'invalid_request', 'account_id');
  });

  it('refuses developer keys and anonymous callers (SPEC.md section 5)', async () => {
    const alice = await signUp(baseUrl);
    expectError(await call(baseUrl, 'GET', '/v1/notifications', undefined, { token: alice.key }), 403, 'dashboard_access_denied');
    expectError(await call(baseUrl, 'GET', '/v1/notifications'), 401, 'authentication_required');
  });

  it('replays, after a reconnection with Last-Event-ID, exactly the events after that id, then continues live', async () => {
    const alice: SignedUp = await signUp(baseUrl);
    const transferId = randomUUID();
    const first = await open(alice.token);
    const seen: DomainEventEnvelope[] = [];
    for (const status of ['pending', 'executing', 'completed']) {
      seen.push(await emit(alice.account.id, { resourceId: transferId, status }));
      assertFrameOf(await first.nextEvent(EVENT_WAIT_MS), seen.at(-1)!);
    }
    first.close();
    await eventually(async () => (hub.subscriberCount(alice.account.id) === 0 ? true : undefined), 5_000, 'the first stream to unsubscribe');

    // While Alice is away: one event reaches Kafka with no stream to take it, one is only in
    // Postgres; the replay is the only way either can reach her.
    const missedLive = await emit(alice.account.id, { type: 'balance.updated', status: 'updated' });
    const onlyInOutbox = await emit(alice.account.id, { kafka: false });
    const other = await signUp(baseUrl);
    await emit(other.account.id); // another account's event in the same range of the outbox

    const resumed = await open(alice.token, { lastEventId: seen[1].id });
    for (const envelope of [seen[2], missedLive, onlyInOutbox]) assertFrameOf(await resumed.nextEvent(EVENT_WAIT_MS), envelope);
    const live = await emit(alice.account.id, { resourceId: transferId, status: 'failed' });
    assertFrameOf(await resumed.nextEvent(EVENT_WAIT_MS), live);

    // The query parameter is the same cursor, for clients that cannot set headers.
    const viaQuery = await open(alice.token, { query: `last_event_id=${onlyInOutbox.id}` });
    assertFrameOf(await viaQuery.nextEvent(EVENT_WAIT_MS), live);
  });

  it('rejects a Last-Event-ID the account does not have with 400, rather than replay nothing', async () => {
    const alice = await signUp(baseUrl);
    const bob = await signUp(baseUrl);
    const bobsEvent = await emit(bob.account.id, { kafka: false });
    const get = (headers: Record<string, string>, query = '') => call(baseUrl, 'GET', `/v1/notifications${query}`, undefined, { token: alice.token, headers });
    expectError(await get({ 'last-event-id': randomUUID() }), 400, 'invalid_request', 'Last-Event-ID', 'an unknown event id');
    expectError(await get({ 'last-event-id': bobsEvent.id }), 400, 'invalid_request', 'Last-Event-ID', 'another account\'s event id');
    expectError(await get({ 'last-event-id': 'not-an-id' }), 400, 'invalid_request', 'Last-Event-ID', 'a malformed header');
    expectError(await get({}, `?last_event_id=${randomUUID()}`), 400, 'invalid_request', 'last_event_id', 'an unknown id in the query');
    expectError(await get({}, '?last_event_id=nope'), 400, 'invalid_request', 'last_event_id', 'a malformed query cursor');
    expectError(await get({}, '?since=yesterday'), 400, 'invalid_request', 'since', 'an unknown query parameter');
  });

  it('forgets the subscription when the client disconnects', async () => {
    const alice = await signUp(baseUrl);
    const stream = await open(alice.token);
    assert.equal(hub.subscriberCount(alice.account.id), 1);
    stream.close();
    await eventually(async () => (hub.subscriberCount(alice.account.id) === 0 ? true : undefined), 5_000, 'the unsubscription');
    await emit(alice.account.id); // nobody left to offer it to: nothing breaks
  });

  it('logs the stream request with no response body', async () => {
    const alice = await signUp(baseUrl);
    const stream = await open(alice.token);
    const requestId = stream.headers.get('request-id')!;
    const logged = await eventually(async () => {
      const response = await call(baseUrl, 'GET', `/v1/request-logs/${requestId}`, undefined, { token: alice.key });
      return response.status === 200 ? response.body : undefined;
    }, 10_000, 'the request log');
    assert.equal(logged.path, '/v1/notifications');
    assert.equal(logged.status, 200);
    assert.equal(logged.response_body, null);
  });

  it('sends a heartbeat comment every SSE_HEARTBEAT_MS while idle', async () => {
    const quick = await startService({ SSE_HEARTBEAT_MS: '200', ROLES: 'api' });
    try {
      const alice = await signUp(quick.baseUrl);
      const stream = await openEventStream(quick.baseUrl, alice.token);
      streams.push(stream);
      // Each wait has a deadline far below the default period, so only the setting can meet it;
      // no assertion on elapsed time, which a loaded machine stretches.
      const heartbeats: SseBlock[] = [];
      while (heartbeats.length < 2) {
        const frame = await stream.next(5_000);
        assert.equal(frame.event, null, 'an idle stream carries comments only');
        if (frame.comments.includes('heartbeat')) heartbeats.push(frame);
      }
      stream.close();
    } finally {
      await quick.stop();
    }
  });
});

