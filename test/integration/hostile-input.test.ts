// Hostile input (issue: reliability): text Postgres cannot store is a 400 naming the field on
// every route and changes nothing, and the request log of such a request is still stored whole,
// as is the log of a request too large for one Kafka message, without taking other logs along.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeRequestLogs } from '../../consumers/request-logs/writer';
import type { RequestLogRecord } from '../../src/request-logs/messages';
import { testService } from '../hooks';
import { createCustomer, signUp, TEST_PASSWORD, uniqueEmail } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { loggedRequest } from '../support/request-logs';

describe('hostile input', () => {
  const base = () => testService().baseUrl;
  const NUL = '\u0000';
  const LONE_SURROGATE = '\ud800';

  it('answers a NUL character or a lone surrogate anywhere in a body with 400 naming the field, and creates nothing', async () => {
    const owner = await signUp(base());
    const email = uniqueEmail('hostile');
    const account = { email, password: TEST_PASSWORD, business_name: `Evil${NUL}Corp`, country_code: 'GB' };
    const table: Array<[string, () => ReturnType<typeof call>, string]> = [
      ['sign-up business_name', () => call(base(), 'POST', '/v1/sandbox/accounts', account), 'business_name'],
      ['sign-up business_name, lone surrogate', () => call(base(), 'POST', '/v1/sandbox/accounts', { ...account, business_name: `Evil${LONE_SURROGATE}` }), 'business_name'],
      ['session email', () => call(base(), 'POST', '/v1/auth/sessions', { email: `a${NUL}@example.com`, password: TEST_PASSWORD }), 'email'],
      ['customer business_name', () => call(base(), 'POST', '/v1/customers', { email: uniqueEmail(), business_name: `x${NUL}`, country_code: 'FR' }, { token: owner.key, idempotencyKey: randomUUID() }), 'business_name'],
      ['a nested transfer field', () => call(base(), 'POST', '/v1/transfers', {
        amount: '1.00', currency: 'EUR', recipient: { email: uniqueEmail(), name: 'N', bank: { country: 'DE', bank_name: `B${NUL}`, account_number: 'DE00000000000', currency: 'EUR' } },
      }, { token: owner.key, idempotencyKey: randomUUID() }), 'recipient.bank.bank_name'],
      ['an object key', () => call(base(), 'POST', '/v1/contacts', { [`na${NUL}me`]: 'x' }, { token: owner.key, idempotencyKey: randomUUID() }), 'body'],
    ];
    for (const [what, request, field] of table) expectError(await request(), 400, 'invalid_request', field, what);

    const { runtime } = testService();
    assert.equal((await runtime.db('accounts').whereRaw('lower(email) = lower(?)', [email])).length, 0, 'no account was created');
    assert.equal((await runtime.db('transfers').where('account_id', owner.account.id)).length, 0, 'no transfer was created');
  });

  it('answers a body nested 10,000 levels deep with 400, and logs the request', async () => {
    const owner = await signUp(base());
    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    const response = await call(base(), 'POST', '/v1/contacts', undefined, { token: owner.key, idempotencyKey: randomUUID(), raw: deep, headers: { 'content-type': 'application/json' } });
    expectError(response, 400, 'invalid_request', 'body');
    assert.match(response.body.message, /nested deeper than 32 levels/);
    await loggedRequest(response.headers.get('request-id')!);
  });

  it('answers a NUL character in a query or path parameter with 400 naming the parameter', async () => {
    const owner = await signUp(base());
    expectError(await call(base(), 'GET', '/v1/transfers?status=%00', undefined, { token: owner.key }), 400, 'invalid_request', 'status');
    expectError(await call(base(), 'GET', '/v1/customers/%00', undefined, { token: owner.key }), 400, 'invalid_request', 'id');
  });

  it('stores the log of a request whose body held a NUL character, marked as cleaned', async () => {
    const refused = await call(base(), 'POST', '/v1/auth/sessions', { email: `a${NUL}@example.com`, password: TEST_PASSWORD });
    assert.equal(refused.status, 400);
    const log = await loggedRequest(refused.headers.get('request-id')!);
    assert.equal(log.request_body.email, 'a\uFFFD@example.com');
    assert.equal(log.request_body.password, '[redacted]');
    assert.equal(log.truncated, true);
    assert.equal(log.status, 400);
  });

  it('stores, truncated and marked so, the log of a response larger than a Kafka message', async () => {
    const owner = await signUp(base());
    // Refused bodies are logged as sent: three of 60 kB make a list page of about 180 kB.
    for (let i = 0; i < 3; i++) {
      const refused = await call(base(), 'POST', '/v1/customers', { email: uniqueEmail(), junk: 'x'.repeat(60_000) }, { token: owner.key, idempotencyKey: randomUUID() });
      assert.equal(refused.status, 400);
      await loggedRequest(refused.headers.get('request-id')!);
    }
    const page = await call(base(), 'GET', '/v1/request-logs?limit=3', undefined, { token: owner.key });
    assert.equal(page.status, 200);
    assert.ok(JSON.stringify(page.body).length > 150_000);
    const log = await loggedRequest(page.headers.get('request-id')!);
    assert.equal(log.truncated, true);
    assert.equal(typeof log.response_body, 'string', 'a cut body is kept as the start of its JSON text');
    assert.ok(JSON.stringify(page.body).startsWith(log.response_body));
    const untouched = await createCustomer(base(), owner.key);
    assert.equal((await loggedRequest(untouched.headers.get('request-id')!)).truncated, false);
  });

  it('the writer stores every log of a batch when Postgres refuses one of them, that one without its bodies', async () => {
    const { runtime } = testService();
    const record = (path: string, requestBody: string | null): RequestLogRecord => ({
      id: randomUUID(), account_id: null, credential_id: null, method: 'POST', path, query: '', status: 400, duration_us: 5,
      idempotency_key: null, request_body: requestBody, response_body: '{"ok":true}', error_code: null, created_at: new Date().toISOString(), truncated: false,
    });
    // jsonb refuses the \u0000 escape: a record that reached the writer with it (an older
    // producer) must not take the rest of its batch along.
    const batch = [record('/a', '{"n":1}'), record('/b', '{"n":2}'), record('/poison', '{"n":"\\u0000"}'), record('/c', null), record('/d', '{"n":4}')];
    await writeRequestLogs(runtime.db, batch.map((value, offset) => ({ key: null, value, partition: 0, offset: String(offset), timestamp: '0' })));
    const rows = await runtime.db('request_logs').whereIn('id', batch.map((r) => r.id)).select('path', 'request_body', 'response_body', 'truncated');
    assert.deepEqual(rows.map((r) => r.path).sort(), ['/a', '/b', '/c', '/d', '/poison']);
    const poison = rows.find((r) => r.path === '/poison')!;
    assert.equal(poison.truncated, true);
    assert.match(poison.request_body, /^body not storable/);
    assert.deepEqual(rows.find((r) => r.path === '/a')!.request_body, { n: 1 });
  });
});
