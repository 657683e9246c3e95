// Customers (SPEC.md section 2 "Customer": creation is idempotent on email) and contacts
// (DESIGN.md section 5: create, list, get, update, delete), with the list envelope and cursor
// pagination of DESIGN.md section 5.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { LIMIT_DEFAULT, OFFSET_MAX } from '../../src/http/pagination';
import { testService } from '../hooks';
import { createContact, createCustomer, signUp, uniqueEmail } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';

const ids = (page: { data: Array<{ id: string }> }): string[] => page.data.map((item) => item.id);

describe('customers', () => {
  const base = () => testService().baseUrl;

  it('creates a customer, and answers the same email in another case with the same customer', async () => {
    const owner = await signUp(base());
    const email = uniqueEmail('Customer');
    const created = await createCustomer(base(), owner.key, { email, business_name: 'Acme GmbH', country_code: 'DE' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(created.body.email, email);
    assert.equal(created.body.business_name, 'Acme GmbH');
    assert.equal(created.body.country_code, 'DE');

    const again = await createCustomer(base(), owner.key, { email: email.toUpperCase(), business_name: 'Acme Again', country_code: 'FR' });
    assert.equal(again.status, 200, 'a known email answers the existing customer');
    assert.deepEqual(again.body, created.body);

    const fetched = await call(base(), 'GET', `/v1/customers/${created.body.id}`, undefined, { token: owner.key });
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, created.body);

    const other = await signUp(base());
    const elsewhere = await createCustomer(base(), other.key, { email, business_name: 'Acme GmbH', country_code: 'DE' });
    assert.equal(elsewhere.status, 201, 'the email is unique per account, not globally');
    assert.notEqual(elsewhere.body.id, created.body.id);
  });

  it('rejects, in order, a bad customer', async () => {
    const owner = await signUp(base());
    const valid = { email: uniqueEmail('customer'), business_name: 'Valid Ltd', country_code: 'GB' };
    const table: Array<[string, Record<string, unknown>, number, string, string]> = [
      ['a missing email', { email: undefined }, 400, 'invalid_request', 'email'],
      ['a malformed email', { email: 'not-an-email' }, 400, 'invalid_request', 'email'],
      ['an empty business name', { business_name: '' }, 400, 'invalid_request', 'business_name'],
      ['an unassigned country code', { country_code: 'ZZ' }, 400, 'invalid_country_code', 'country_code'],
      ['a three-letter country code', { country_code: 'GBR' }, 400, 'invalid_country_code', 'country_code'],
      ['a numeric country code', { country_code: 826 }, 400, 'invalid_request', 'country_code'],
      ['an unknown field', { nickname: 'acme' }, 400, 'invalid_request', 'nickname'],
    ];
    for (const [what, change, status, code, details] of table) {
      expectError(await createCustomer(base(), owner.key, { ...valid, ...change }), status, code, details, what);
    }
    const listed = await call(base(), 'GET', '/v1/customers', undefined, { token: owner.key });
    assert.deepEqual(listed.body.data, [], 'nothing was created');
    expectError(await call(base(), 'GET', `/v1/customers/${randomUUID()}`, undefined, { token: owner.key }), 404, 'resource_not_found');
  });

  it('lists customers newest first in the list envelope, page by page', async () => {
    const owner = await signUp(base());
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await createCustomer(base(), owner.key)).body.id);
    const newestFirst = [...created].reverse();

    const all = await call(base(), 'GET', '/v1/customers', undefined, { token: owner.key });
    assert.equal(all.status, 200);
    assert.deepEqual(Object.keys(all.body).sort(), ['data', 'has_more', 'next_cursor']);
    assert.deepEqual(ids(all.body), newestFirst);
    assert.equal(all.body.has_more, false);
    assert.equal(all.body.next_cursor, null);

    const seen: string[] = [];
    let path = '/v1/customers?limit=2';
    for (let page = 0; page < 5; page++) {
      const response = await call(base(), 'GET', path, undefined, { token: owner.key });
      assert.equal(response.status, 200);
      assert.ok(response.body.data.length <= 2);
      seen.push(...ids(response.body));
      if (!response.body.has_more) {
        assert.equal(response.body.next_cursor, null);
        break;
      }
      assert.equal(response.body.next_cursor, seen[seen.length - 1]);
      path = `/v1/customers?limit=2&before=${response.body.next_cursor}`;
    }
    assert.deepEqual(seen, newestFirst, 'the pages together hold every customer once, newest first');

    expectError(await call(base(), 'GET', '/v1/customers?limit=0', undefined, { token: owner.key }), 400, 'invalid_request', 'limit');
    expectError(await call(base(), 'GET', '/v1/customers?limit=201', undefined, { token: owner.key }), 400, 'invalid_request', 'limit');
  });

  it('pages by offset as well; refuses a cursor that is not in the list, both starts at once, and offsets out of bounds', async () => {
    const [owner, other] = await Promise.all([signUp(base()), signUp(base())]);
    const created: string[] = [];
    for (let i = 0; i < 4; i++) created.push((await createCustomer(base(), owner.key)).body.id);
    const othersCustomer = (await createCustomer(base(), other.key)).body.id;
    const newestFirst = [...created].reverse();
    const list = (query: string) => call(base(), 'GET', `/v1/customers?${query}`, undefined, { token: owner.key });

    const middle = await list('limit=2&offset=1');
    assert.equal(middle.status, 200);
    assert.deepEqual(ids(middle.body), newestFirst.slice(1, 3));
    assert.equal(middle.body.has_more, true);
    assert.equal(middle.body.next_cursor, newestFirst[2], 'the cursor continues where the offset page ended');
    const last = await list('limit=2&offset=3');
    assert.deepEqual(ids(last.body), newestFirst.slice(3));
    assert.equal(last.body.has_more, false);
    assert.deepEqual(ids((await list(`offset=${OFFSET_MAX}`)).body), [], 'past the end: an empty page');

    expectError(await list(`before=${newestFirst[0]}&offset=1`), 400, 'invalid_request', 'offset', 'before and offset together');
    expectError(await list(`before=${randomUUID()}`), 400, 'invalid_request', 'before', 'a cursor that names nothing');
    expectError(await list(`before=${othersCustomer}`), 400, 'invalid_request', 'before', "another account's customer as the cursor");
    expectError(await list('offset=-1'), 400, 'invalid_request', 'offset', 'a negative offset');
    expectError(await list(`offset=${OFFSET_MAX + 1}`), 400, 'invalid_request', 'offset', 'an offset past the bound');
    expectError(await list('offset=two'), 400, 'invalid_request', 'offset', 'an offset that is no integer');
  });

  it(`pages ${LIMIT_DEFAULT} customers at a time when no limit is given`, async function () {
    this.timeout(60_000);
    const owner = await signUp(base());
    const count = LIMIT_DEFAULT + 3;
    // Fewer in flight than the per-credential burst.
    for (let start = 0; start < count; start += 20) {
      const batch = Array.from({ length: Math.min(20, count - start) }, () => createCustomer(base(), owner.key));
      for (const response of await Promise.all(batch)) assert.equal(response.status, 201);
    }
    const first = await call(base(), 'GET', '/v1/customers', undefined, { token: owner.key });
    assert.equal(first.status, 200);
    assert.equal(first.body.data.length, LIMIT_DEFAULT);
    assert.equal(first.body.has_more, true);
    const rest = await call(base(), 'GET', `/v1/customers?before=${first.body.next_cursor}`, undefined, { token: owner.key });
    assert.equal(rest.body.data.length, 3);
    assert.equal(rest.body.has_more, false);
  });
});

describe('contacts', () => {
  const base = () => testService().baseUrl;
  const bank = { country: 'DE', bank_name: 'Sandbox Bank', account_number: 'DE89370400440532013000', routing_number: 'COBADEFFXXX', currency: 'EUR' };

  it('creates, reads, changes, lists and deletes a contact', async () => {
    const owner = await signUp(base());
    const created = await createContact(base(), owner.key, { name: 'Ada Lovelace', bank, note: 'supplier' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, 'Ada Lovelace');
    assert.deepEqual(created.body.bank, bank);
    assert.equal(created.body.note, 'supplier');
    const path = `/v1/contacts/${created.body.id}`;

    const fetched = await call(base(), 'GET', path, undefined, { token: owner.key });
    assert.equal(fetched.status, 200);
    assert.deepEqual(fetched.body, created.body);

    const patched = await call(base(), 'PATCH', path, { note: 'main supplier', bank: { ...bank, currency: 'USD' } }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.note, 'main supplier');
    assert.equal(patched.body.bank.currency, 'USD');
    assert.equal(patched.body.name, 'Ada Lovelace', 'fields not named stay as they were');
    assert.ok(Date.parse(patched.body.updated_at) >= Date.parse(created.body.updated_at));
    assert.deepEqual((await call(base(), 'GET', path, undefined, { token: owner.key })).body, patched.body);

    const second = await createContact(base(), owner.key, { name: 'Charles Babbage' });
    assert.equal(second.status, 201);
    assert.equal(second.body.bank, null);
    const listed = await call(base(), 'GET', '/v1/contacts', undefined, { token: owner.key });
    assert.deepEqual(ids(listed.body), [second.body.id, created.body.id]);
    assert.equal(listed.body.has_more, false);
    const paged = await call(base(), 'GET', '/v1/contacts?limit=1', undefined, { token: owner.key });
    assert.deepEqual(ids(paged.body), [second.body.id]);
    assert.equal(paged.body.has_more, true);
    assert.equal(paged.body.next_cursor, second.body.id);

    const deleteKey = randomUUID();
    const deleted = await call(base(), 'DELETE', path, undefined, { token: owner.key, idempotencyKey: deleteKey });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { id: created.body.id, deleted: true });
    expectError(await call(base(), 'GET', path, undefined, { token: owner.key }), 404, 'resource_not_found');
    const replayed = await call(base(), 'DELETE', path, undefined, { token: owner.key, idempotencyKey: deleteKey });
    assert.equal(replayed.status, 200, 'a retried delete replays its answer');
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    expectError(await call(base(), 'DELETE', path, undefined, { token: owner.key, idempotencyKey: randomUUID() }), 404, 'resource_not_found');
    assert.deepEqual(ids((await call(base(), 'GET', '/v1/contacts', undefined, { token: owner.key })).body), [second.body.id]);
  });

  it('rejects, in order, a bad contact', async () => {
    const owner = await signUp(base());
    const table: Array<[string, Record<string, unknown>, number, string, string]> = [
      ['a missing name', { name: undefined }, 400, 'invalid_request', 'name'],
      ['a malformed email', { email: 'nobody' }, 400, 'invalid_request', 'email'],
      ['a bank without a currency', { bank: { ...bank, currency: undefined } }, 400, 'invalid_request', 'bank.currency'],
      ['a bank currency that is not supported', { bank: { ...bank, currency: 'XYZ' } }, 400, 'invalid_currency', 'bank.currency'],
      ['a stablecoin as bank currency', { bank: { ...bank, currency: 'USDC' } }, 400, 'invalid_currency', 'bank.currency'],
      ['a bank country that is not ISO 3166-1', { bank: { ...bank, country: 'EU' } }, 400, 'invalid_country_code', 'bank.country'],
    ];
    for (const [what, change, status, code, details] of table) {
      expectError(await createContact(base(), owner.key, change), status, code, details, what);
    }
    const created = await createContact(base(), owner.key);
    const path = `/v1/contacts/${created.body.id}`;
    expectError(await call(base(), 'PATCH', path, {}, { token: owner.key, idempotencyKey: randomUUID() }), 400, 'invalid_request', 'body');
    expectError(await call(base(), 'PATCH', path, { bank: { ...bank, currency: 'JPY' } }, { token: owner.key, idempotencyKey: randomUUID() }), 400, 'invalid_currency', 'bank.currency');
    expectError(await call(base(), 'PATCH', `/v1/contacts/${randomUUID()}`, { note: 'x' }, { token: owner.key, idempotencyKey: randomUUID() }), 404, 'resource_not_found');
    assert.deepEqual(ids((await call(base(), 'GET', '/v1/contacts', undefined, { token: owner.key })).body), [created.body.id]);
  });
});
