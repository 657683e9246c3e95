// Idempotency of write routes (SPEC.md sections 4, 7 and 8; DESIGN.md section 5): the key is
// required, a replay answers the stored response with 200 and executes nothing, a different
// body is a conflict, concurrent duplicates execute once, and Postgres still protects a key
// after Redis lost it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { signUp, uniqueEmail } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { deleteKeysStartingWith } from '../support/redis';

/** Deletes this test run's idempotency keys from Redis, as if Redis had lost them. */
const forgetIdempotencyKeysInRedis = (): Promise<number> => deleteKeysStartingWith(testService().config.redisUrl, `${testService().config.redisKeyPrefix}idem:`);

const contactBody = () => ({ name: 'Grace Hopper', email: uniqueEmail('contact'), note: 'invoice 42' });

describe('idempotency of write routes', () => {
  const base = () => testService().baseUrl;
  /** POST /v1/contacts as `token` under `idempotencyKey`. */
  const postContact = (token: string, body: unknown, idempotencyKey: string) => call(base(), 'POST', '/v1/contacts', body, { token, idempotencyKey });
  /** The first page of `path` as `token`. */
  const list = (token: string, path: string) => call(base(), 'GET', path, undefined, { token });

  it('requires an Idempotency-Key on every write route', async () => {
    const owner = await signUp(base());
    const table: Array<[string, string, unknown]> = [
      ['POST', '/v1/customers', { email: uniqueEmail('customer'), business_name: 'Keyless Ltd', country_code: 'GB' }],
      ['POST', '/v1/contacts', contactBody()],
      ['PATCH', `/v1/contacts/${randomUUID()}`, { note: 'x' }],
      ['DELETE', `/v1/contacts/${randomUUID()}`, undefined],
    ];
    for (const [method, path, body] of table) {
      expectError(await call(base(), method, path, body, { token: owner.key }), 400, 'idempotency_key_missing', 'Idempotency-Key', `${method} ${path}`);
    }
    const spaced = await postContact(owner.key, contactBody(), 'has a space');
    expectError(spaced, 400, 'invalid_request', 'Idempotency-Key');
    const listed = await list(owner.key, '/v1/contacts');
    assert.deepEqual(listed.body.data, [], 'nothing was created');
  });

  it('replays the same key and body with 200, the same body and Idempotent-Replayed, creating nothing more', async () => {
    const owner = await signUp(base());
    const key = randomUUID();
    const body = contactBody();
    const first = await postContact(owner.key, body, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.headers.get('idempotent-replayed'), null);

    const replay = await postContact(owner.key, body, key);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first.body);

    const listed = await list(owner.key, '/v1/contacts');
    assert.deepEqual(listed.body.data.map((c: { id: string }) => c.id), [first.body.id]);
  });

  it('treats bodies that differ only in key order as the same request', async () => {
    const owner = await signUp(base());
    const key = randomUUID();
    const email = uniqueEmail('contact');
    const first = await postContact(owner.key, { name: 'Order', email, bank: { country: 'DE', bank_name: 'Bank', account_number: 'DE89370400440532013000', currency: 'EUR' } }, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const reordered = await postContact(owner.key, { bank: { currency: 'EUR', account_number: 'DE89370400440532013000', bank_name: 'Bank', country: 'DE' }, email, name: 'Order' }, key);
    assert.equal(reordered.status, 200, JSON.stringify(reordered.body));
    assert.equal(reordered.headers.get('idempotent-replayed'), 'true');
    assert.equal(reordered.body.id, first.body.id);
  });

  it('rejects, in order, a reused key with a different request as idempotency_conflict and keeps the original', async () => {
    const owner = await signUp(base());
    const key = randomUUID();
    const body = contactBody();
    const first = await postContact(owner.key, body, key);
    assert.equal(first.status, 201);
    const table: Array<[string, string, string, unknown]> = [
      ['a different body', 'POST', '/v1/contacts', { ...body, note: 'invoice 43' }],
      ['an extra field', 'POST', '/v1/contacts', { ...body, bank: { country: 'GB', bank_name: 'B', account_number: '12345678', currency: 'GBP' } }],
      ['another route', 'POST', '/v1/customers', { email: body.email, business_name: 'Other', country_code: 'GB' }],
    ];
    for (const [what, method, path, other] of table) {
      expectError(await call(base(), method, path, other, { token: owner.key, idempotencyKey: key }), 409, 'idempotency_conflict', 'Idempotency-Key', what);
    }
    const replay = await postContact(owner.key, body, key);
    assert.equal(replay.status, 200);
    assert.equal(replay.body.id, first.body.id);
    const customers = await list(owner.key, '/v1/customers');
    assert.deepEqual(customers.body.data, [], 'the conflicting request executed nothing');
  });

  it('takes an id in the path in either case as one request under one key: the repeat is replayed, not a conflict', async () => {
    const owner = await signUp(base());
    const contact = await postContact(owner.key, contactBody(), randomUUID());
    assert.equal(contact.status, 201, JSON.stringify(contact.body));
    const key = randomUUID();
    const first = await call(base(), 'PATCH', `/v1/contacts/${contact.body.id.toUpperCase()}`, { note: 'invoice 44' }, { token: owner.key, idempotencyKey: key });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const again = await call(base(), 'PATCH', `/v1/contacts/${contact.body.id}`, { note: 'invoice 44' }, { token: owner.key, idempotencyKey: key });
    assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body], [200, 'true', first.body]);
    const other = await postContact(owner.key, contactBody(), randomUUID());
    expectError(await call(base(), 'PATCH', `/v1/contacts/${other.body.id}`, { note: 'invoice 44' }, { token: owner.key, idempotencyKey: key }), 409, 'idempotency_conflict', 'Idempotency-Key', 'another contact is another request');
  });

  it('executes 50 concurrent requests with one key once, and answers all 50 with the same contact', async () => {
    const owner = await signUp(base());
    const key = randomUUID();
    const body = contactBody();
    const responses = await Promise.all(Array.from({ length: 50 }, () => postContact(owner.key, body, key)));

    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, `statuses: ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 200).length, 49, `statuses: ${statuses.join(',')}`);
    assert.equal(new Set(responses.map((r) => r.body.id)).size, 1, 'every answer names the same contact');
    const listed = await list(owner.key, '/v1/contacts');
    assert.equal(listed.body.data.length, 1);
    assert.equal(listed.body.data[0].id, responses[0].body.id);
  });

  it('still replays the original contact after Redis lost every idempotency key', async () => {
    const owner = await signUp(base());
    const key = randomUUID();
    const body = contactBody();
    const first = await postContact(owner.key, body, key);
    assert.equal(first.status, 201);

    assert.ok(await forgetIdempotencyKeysInRedis() >= 1, 'the key was cached in Redis');
    const replay = await postContact(owner.key, body, key);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first.body);
    expectError(await postContact(owner.key, { ...body, name: 'Changed' }, key), 409, 'idempotency_conflict');
    const listed = await list(owner.key, '/v1/contacts');
    assert.equal(listed.body.data.length, 1, 'no second contact');
  });

  it('records each of many concurrent completions in Postgres: all replay after Redis lost the keys', async () => {
    const owner = await signUp(base());
    const requests = Array.from({ length: 20 }, () => ({ key: randomUUID(), body: contactBody() }));
    const first = await Promise.all(requests.map(({ key, body }) => postContact(owner.key, body, key)));
    assert.deepEqual(first.map((r) => r.status), requests.map(() => 201));

    await forgetIdempotencyKeysInRedis();
    const replays = await Promise.all(requests.map(({ key, body }) => postContact(owner.key, body, key)));
    assert.deepEqual(replays.map((r) => r.status), requests.map(() => 200));
    assert.deepEqual(replays.map((r) => r.body), first.map((r) => r.body), 'each key replays its own response');
    const listed = await list(owner.key, '/v1/contacts');
    assert.equal(listed.body.data.length, requests.length, 'no second contact for any key');
  });

  it('does not store a validation failure: the corrected request with the same key executes', async () => {
    const owner = await signUp(base());
    const key = randomUUID();
    const bad = await postContact(owner.key, { name: 'No Email' }, key);
    expectError(bad, 400, 'invalid_request', 'email');
    const good = await postContact(owner.key, contactBody(), key);
    assert.equal(good.status, 201, JSON.stringify(good.body));
    assert.equal(good.headers.get('idempotent-replayed'), null);
  });

  it('scopes keys to the account: two accounts use the same key independently', async () => {
    const alice = await signUp(base());
    const bob = await signUp(base());
    const key = `invoice-${randomUUID()}`;
    const forAlice = await postContact(alice.key, contactBody(), key);
    const forBob = await postContact(bob.key, contactBody(), key);
    assert.equal(forAlice.status, 201);
    assert.equal(forBob.status, 201, 'another account\'s use of the key is no conflict');
    assert.notEqual(forAlice.body.id, forBob.body.id);

    // One account, two credentials: the key belongs to the account, not to the credential.
    const again = await postContact(alice.token, contactBody(), key);
    expectError(again, 409, 'idempotency_conflict');
  });

  it('replays a customer creation without a second customer', async () => {
    const owner = await signUp(base());
    const key = randomUUID();
    const body = { email: uniqueEmail('customer'), business_name: 'Replay Ltd', country_code: 'NL' };
    const first = await call(base(), 'POST', '/v1/customers', body, { token: owner.key, idempotencyKey: key });
    const replay = await call(base(), 'POST', '/v1/customers', body, { token: owner.key, idempotencyKey: key });
    assert.equal(first.status, 201);
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first.body);
    const listed = await list(owner.key, '/v1/customers');
    assert.equal(listed.body.data.length, 1);
  });
});
