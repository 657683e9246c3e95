// Request logs (SPEC.md section 4 "Request logs"; DESIGN.md section 5): every request is
// logged through Kafka into Postgres with secrets redacted, and read back by its Request-Id.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import { writeRequestLogs } from '../../consumers/request-logs/writer';
import { startConsumer } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import type { RequestLogRecord } from '../../src/request-logs/messages';
import { testService } from '../hooks';
import { createCustomer, signUp, TEST_PASSWORD, uniqueEmail } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { loggedRequest } from '../support/request-logs';

const LOG_WAIT_MS = 15_000;

describe('request logs', () => {
  const base = () => testService().baseUrl;

  it("returns a request's method, path, status, bodies and idempotency key by its Request-Id", async () => {
    const owner = await signUp(base());
    const idempotencyKey = `invoice-${randomUUID()}`;
    const body = { email: uniqueEmail('customer'), business_name: 'Logged Ltd', country_code: 'IE' };
    const created = await call(base(), 'POST', '/v1/customers', body, { token: owner.key, idempotencyKey });
    assert.equal(created.status, 201);
    const requestId = created.headers.get('request-id')!;
    assert.match(requestId, /^[0-9a-f-]{36}$/);

    await loggedRequest(requestId);
    const response = await call(base(), 'GET', `/v1/request-logs/${requestId}`, undefined, { token: owner.key });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const entry = response.body;
    assert.equal(entry.id, requestId);
    assert.equal(entry.method, 'POST');
    assert.equal(entry.path, '/v1/customers');
    assert.equal(entry.status, 201);
    assert.equal(entry.idempotency_key, idempotencyKey);
    assert.equal(entry.error_code, null);
    assert.equal(entry.account_id, owner.account.id);
    assert.equal(entry.credential_id, owner.keyId);
    assert.deepEqual(entry.request_body, body);
    assert.deepEqual(entry.response_body, created.body);
    assert.ok(Date.parse(entry.created_at) > 0);
    assert.match(entry.duration_ms, /^\d+\.\d{3}$/);
  });

  it('logs a failed request with its error code', async () => {
    const owner = await signUp(base());
    const failed = await call(base(), 'POST', '/v1/customers', { email: 'not-an-email', business_name: 'X', country_code: 'GB' }, { token: owner.key, idempotencyKey: randomUUID() });
    expectError(failed, 400, 'invalid_request', 'email');
    const entry = await loggedRequest(failed.headers.get('request-id')!);
    assert.equal(entry.status, 400);
    assert.equal(entry.error_code, 'invalid_request');
    assert.deepEqual(entry.response_body, failed.body);
  });

  it('never stores passwords, keys, session tokens or the Authorization header', async () => {
    const email = uniqueEmail('secrets');
    const signUpResponse = await call(base(), 'POST', '/v1/sandbox/accounts', { email, password: TEST_PASSWORD, business_name: 'Secret Ltd', country_code: 'GB' });
    assert.equal(signUpResponse.status, 201);
    const secretKey: string = signUpResponse.body.api_key.key;
    const sessionToken: string = signUpResponse.body.session.token;

    const signUpLog = await loggedRequest(signUpResponse.headers.get('request-id')!);
    assert.equal(signUpLog.request_body.password, '[redacted]');
    assert.equal(signUpLog.request_body.email, email);
    assert.equal(signUpLog.response_body.api_key.key, '[redacted]');
    assert.equal(signUpLog.response_body.api_key.key_hint, signUpResponse.body.api_key.key_hint, 'the hint is not a secret');
    assert.equal(signUpLog.response_body.session.token, '[redacted]');
    assert.equal(signUpLog.response_body.account.id, signUpResponse.body.account.id);

    const signIn = await call(base(), 'POST', '/v1/auth/sessions', { email, password: TEST_PASSWORD });
    const signInLog = await loggedRequest(signIn.headers.get('request-id')!);
    assert.equal(signInLog.request_body.password, '[redacted]');
    assert.equal(signInLog.response_body.token, '[redacted]');

    const newKey = await call(base(), 'POST', '/v1/api-keys', { type: 'secret' }, { token: sessionToken, idempotencyKey: randomUUID() });
    const newKeyLog = await loggedRequest(newKey.headers.get('request-id')!);
    assert.equal(newKeyLog.response_body.key, '[redacted]');

    const read = await call(base(), 'GET', '/v1/customers', undefined, { token: secretKey });
    const readLog = await loggedRequest(read.headers.get('request-id')!);
    const stored = JSON.stringify([signUpLog, signInLog, newKeyLog, readLog]);
    for (const secret of [TEST_PASSWORD, secretKey, sessionToken, signIn.body.token, newKey.body.key]) {
      assert.equal(stored.includes(secret), false, 'a secret reached the request log');
    }
    assert.equal(/authorization|bearer/i.test(stored), false, 'the Authorization header reached the request log');
  });

  it('lists the account\'s logs newest first, with has_more, next_cursor and before', async () => {
    const owner = await signUp(base());
    const requestIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await createCustomer(base(), owner.key);
      assert.equal(response.status, 201);
      requestIds.push(response.headers.get('request-id')!);
    }
    for (const id of requestIds) await loggedRequest(id);
    const [oldest, middle, newest] = requestIds;

    const first = await call(base(), 'GET', '/v1/request-logs?limit=2', undefined, { token: owner.key });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body.data.map((l: { id: string }) => l.id), [newest, middle]);
    assert.equal(first.body.has_more, true);
    assert.equal(first.body.next_cursor, middle);

    const second = await call(base(), 'GET', `/v1/request-logs?limit=2&before=${first.body.next_cursor}`, undefined, { token: owner.key });
    assert.equal(second.status, 200);
    assert.deepEqual(second.body.data.map((l: { id: string }) => l.id), [oldest]);
    assert.equal(second.body.has_more, false);
    assert.equal(second.body.next_cursor, null);

    const other = await signUp(base());
    const othersView = await call(base(), 'GET', '/v1/request-logs', undefined, { token: other.key });
    assert.equal(othersView.body.data.some((l: { id: string }) => requestIds.includes(l.id)), false, 'another account does not see these logs');
  });

  it('filters the list by status class or code, path prefix and a first instant', async () => {
    const owner = await signUp(base());
    const since = new Date().toISOString();
    // A log's created_at is its request's end, to the millisecond, and equal ones are listed by id:
    // the three requests end a few milliseconds apart so that newest first is one order.
    const apart = () => new Promise((resolve) => setTimeout(resolve, 5));
    const created = await createCustomer(base(), owner.key);
    await apart();
    const refused = await call(base(), 'POST', '/v1/customers', { email: 'not-an-email', business_name: 'X', country_code: 'GB' }, { token: owner.key, idempotencyKey: randomUUID() });
    await apart();
    const missing = await call(base(), 'GET', `/v1/transfers/${randomUUID()}`, undefined, { token: owner.key });
    const ids = [created, refused, missing].map((r) => r.headers.get('request-id')!);
    for (const id of ids) await loggedRequest(id);
    const [createdId, refusedId, missingId] = ids;
    const listed = async (query: string) => {
      const page = await call(base(), 'GET', `/v1/request-logs?${query}`, undefined, { token: owner.key });
      assert.equal(page.status, 200, JSON.stringify(page.body));
      return page.body.data.map((l: { id: string }) => l.id).filter((id: string) => ids.includes(id));
    };
    assert.deepEqual(await listed('status=4xx'), [missingId, refusedId]);
    assert.deepEqual(await listed('status=2xx'), [createdId]);
    assert.deepEqual(await listed('status=404'), [missingId]);
    assert.deepEqual(await listed('path_prefix=/v1/customers'), [refusedId, createdId]);
    assert.deepEqual(await listed('path_prefix=/v1/transfers&status=4xx'), [missingId]);
    assert.deepEqual(await listed('path_prefix=/v1/cust%25'), [], 'a % in the prefix is taken literally');
    assert.deepEqual(await listed(`since=${encodeURIComponent(since)}`), [missingId, refusedId, createdId]);
    assert.deepEqual(await listed(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
    for (const [query, field] of [['status=4x', 'status'], ['status=600', 'status'], ['path_prefix=v1', 'path_prefix'], ['since=yesterday', 'since']]) {
      expectError(await call(base(), 'GET', `/v1/request-logs?${query}`, undefined, { token: owner.key }), 400, 'invalid_request', field, query);
    }
  });

  it('rejects, in order, reads of logs the caller may not see and bad list parameters', async () => {
    const owner = await signUp(base());
    const stranger = await signUp(base());
    const created = await createCustomer(base(), owner.key);
    const requestId = created.headers.get('request-id')!;
    await loggedRequest(requestId);

    const table: Array<[string, string, number, string, string | null | undefined]> = [
      ["another account's log", `/v1/request-logs/${requestId}`, 403, 'cross_account_access_denied', requestId],
      ['an unknown id', `/v1/request-logs/${randomUUID()}`, 404, 'resource_not_found', undefined],
      ['an id that is no uuid', '/v1/request-logs/not-a-uuid', 400, 'invalid_request', 'id'],
      ['limit=0', '/v1/request-logs?limit=0', 400, 'invalid_request', 'limit'],
      ['limit=201', '/v1/request-logs?limit=201', 400, 'invalid_request', 'limit'],
      ['limit=ten', '/v1/request-logs?limit=ten', 400, 'invalid_request', 'limit'],
      ['a cursor that is no uuid', '/v1/request-logs?before=yesterday', 400, 'invalid_request', 'before'],
    ];
    for (const [what, path, status, code, details] of table) {
      expectError(await call(base(), 'GET', path, undefined, { token: stranger.key }), status, code, details, what);
    }
    const limits = await call(base(), 'GET', '/v1/request-logs?limit=200', undefined, { token: owner.key });
    assert.equal(limits.status, 200, 'limit=200 is the maximum, and allowed');
  });

  it('does not log health probes', async () => {
    const probe = await call(base(), 'GET', '/healthz');
    const owner = await signUp(base());
    const later = await createCustomer(base(), owner.key);
    // A log sent after the probe has been written, so the probe's, had it been sent, would have had time too.
    await loggedRequest(later.headers.get('request-id')!);
    const response = await call(base(), 'GET', `/v1/request-logs/${probe.headers.get('request-id')}`, undefined, { token: testService().runtime.config.masterKey });
    expectError(response, 404, 'resource_not_found');
  });

  it('the writer stores a redelivered batch once, and the new logs that came with it', async () => {
    const { runtime } = testService();
    const log = (path: string): RequestLogRecord => ({
      id: randomUUID(), account_id: null, credential_id: null, method: 'GET', path, query: 'a=1\tb', status: 200, duration_us: 12,
      idempotency_key: null, request_body: null, response_body: '{"note":"tab\\there, \\"quoted\\""}', error_code: null,
      created_at: new Date().toISOString(), truncated: false,
    });
    const delivered = (logs: RequestLogRecord[]) => logs.map((value, offset) => ({ key: null, value, partition: 0, offset: String(offset), timestamp: '0' }));
    const first = [log('/first'), log('/second')];
    await writeRequestLogs(runtime.db, delivered(first));
    const third = log('/third');
    await writeRequestLogs(runtime.db, delivered(first)); // as after a crash before the offsets were committed
    await writeRequestLogs(runtime.db, delivered([first[1], third]));

    const ids = [...first, third].map((l) => l.id);
    const rows = await runtime.db('request_logs').whereIn('id', ids).select('id', 'path', 'query', 'response_body');
    assert.deepEqual(rows.map((r) => r.path).sort(), ['/first', '/second', '/third']);
    for (const row of rows) {
      assert.equal(row.query, 'a=1\tb');
      assert.deepEqual(row.response_body, { note: 'tab\there, "quoted"' });
    }
  });

  describe('on Kafka', () => {
    let consumer: Consumer | null = null;
    after(async () => { await consumer?.disconnect(); });

    it('publishes each log to the request.logs topic, decodable through the schema registry', async () => {
      const { runtime } = testService();
      const received = new Map<string, RequestLogRecord>();
      consumer = await startConsumer<RequestLogRecord>(runtime, {
        groupId: `${runtime.names.prefix}request-logs-reader.${randomUUID()}`,
        topic: TOPICS.requestLogs,
        fromBeginning: true,
        handleBatch: async (messages) => { for (const m of messages) received.set(m.value.id, m.value); },
      });
      const owner = await signUp(base());
      const created = await createCustomer(base(), owner.key);
      const requestId = created.headers.get('request-id')!;

      const message = await eventually(async () => received.get(requestId), LOG_WAIT_MS, 'the request log on Kafka');
      assert.equal(message.method, 'POST');
      assert.equal(message.path, '/v1/customers');
      assert.equal(message.status, 201);
      assert.equal(message.account_id, owner.account.id);
      assert.deepEqual(JSON.parse(message.response_body!), created.body);
      const signUpMessage = await eventually(async () => received.get(owner.requestId), LOG_WAIT_MS, 'the sign-up log on Kafka');
      assert.equal(JSON.parse(signUpMessage.request_body!).password, '[redacted]');
      assert.equal(signUpMessage.response_body!.includes(owner.key), false);
    });
  });
});
