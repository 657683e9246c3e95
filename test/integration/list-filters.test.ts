// The list filters of DESIGN.md section 5h ("Finding things"): GET /v1/transfers, /v1/transactions,
// /v1/payments and /v1/holds take `from` and `to` on created_at (a date is that UTC day, so `to`
// includes its day; an instant is exact, `to` exclusive), `currency` and `metadata[<key>]=<value>`
// (exact; several all hold; a transaction has its own transfer's or payment's), transfers also
// `recipient_email` (any case); they combine with the routes' own filters and page with the same
// cursor. A seeded generator makes one account's transfers, holds and payments across currencies,
// recipients, metadata and times, recording instants between them (created_at cannot be set through
// the API), then reads each list under generated filter combinations, a page of a small `limit` at a
// time, against the model: the account's items kept by the filters, newest first. Bad values are 400
// invalid_request naming the parameter. Each seed of support/seeds.ts is a run of its own; a
// failure names its seed, and TEST_SEED=N replays it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { createCustomer, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { fund, transfer } from '../support/money';
import { linkCustomer, ownerWithCustomer } from '../support/partner-links';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seededCases } from '../support/seeds';

const base = () => testService().baseUrl;
const FIAT = ['USD', 'EUR', 'GBP'];
const ORDERS = ['A-17', 'A-18', 'B-1'];
const CHANNELS = ['web', 'app'];
const ALL = [...FIAT, 'USDC'];
const OPERATIONS = 48;
const COMBINATIONS = 16;
const RATE_LIMITED_TRIES_MAX = 10;
const DAY_MS = 86_400_000;

/** What the filters see of an item: its id, created_at (ms), currency, metadata, and the route's own fields. */
interface Item { id: string; at: number; currency: string; metadata: Record<string, string>; status?: string; recipient?: string; customer?: string }
type Query = Record<string, string | undefined>;
type Resource = 'transfers' | 'holds' | 'payments' | 'transactions';

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)];
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const isDate = (text: string) => /^\d{4}-\d{2}-\d{2}$/.test(text);

/** The window the query names, as the model reads DESIGN.md: `from` a date's 00:00 UTC or the instant; `to` the next day's 00:00 UTC or the instant. */
function windowOf(query: Query): { from: number; to: number } {
  const from = query.from === undefined ? -Infinity : Date.parse(isDate(query.from) ? `${query.from}T00:00:00Z` : query.from);
  const to = query.to === undefined ? Infinity : Date.parse(isDate(query.to) ? `${query.to}T00:00:00Z` : query.to) + (isDate(query.to) ? DAY_MS : 0);
  return { from, to };
}

/** The metadata pairs a query asks for (its `metadata[<key>]` parameters). */
const metadataOf = (query: Query): Array<[string, string]> => Object.entries(query).flatMap(([name, value]) => {
  const key = /^metadata\[(.*)\]$/.exec(name)?.[1];
  return key === undefined || value === undefined ? [] : [[key, value] as [string, string]];
});

/** The items of `list` (newest first) the query keeps, after its `before` when it names one: what the pages must give, in order. */
function expected(list: Item[], query: Query): string[] {
  const { from, to } = windowOf(query);
  const pairs = metadataOf(query);
  const start = query.before === undefined ? 0 : list.findIndex((item) => item.id === query.before) + 1;
  return list.slice(start).filter((item) => item.at >= from && item.at < to
    && (query.currency === undefined || item.currency === query.currency)
    && (query.status === undefined || item.status === query.status)
    && (query.customer_id === undefined || item.customer === query.customer_id)
    && (query.recipient_email === undefined || item.recipient === query.recipient_email.toLowerCase())
    && pairs.every(([key, value]) => Object.hasOwn(item.metadata, key) && item.metadata[key] === value)).map((item) => item.id);
}

const path = (resource: Resource, query: Query) => {
  const given = Object.entries(query).filter((pair): pair is [string, string] => pair[1] !== undefined);
  return `/v1/${resource}${given.length ? `?${new URLSearchParams(given)}` : ''}`;
};

/**
 * A GET as a SPEC.md section 7 client makes it: a 429 (the account's request rate; the reads below
 * go faster than it) waits its Retry-After and asks again, a bounded number of times.
 */
async function read(key: string, url: string): Promise<JsonResponse> {
  for (let tries = 1; ; tries++) {
    const response = await call(base(), 'GET', url, undefined, { token: key });
    if (response.status !== 429 || tries === RATE_LIMITED_TRIES_MAX) return response;
    await pause(1000 * Number(response.headers.get('retry-after') ?? 1));
  }
}

/** Every page of the list under `query`, `limit` at a time, following next_cursor: the ids in order. */
async function allPages(key: string, resource: Resource, query: Query, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let before = query.before;
  for (let pages = 0; pages < 200; pages++) {
    const response = await read(key, path(resource, { ...query, before, limit: String(limit) }));
    assert.equal(response.status, 200, `${path(resource, { ...query, before })}: ${JSON.stringify(response.body)}`);
    const { data, has_more, next_cursor } = response.body;
    assert.ok(data.length <= limit, 'a page holds at most limit items');
    ids.push(...data.map((item: { id?: string; transfer_id?: string }) => item.id ?? item.transfer_id));
    if (!has_more) {
      assert.equal(next_cursor, null);
      return ids;
    }
    assert.equal(data.length, limit, 'a page before the last is full');
    before = next_cursor;
  }
  throw new Error('more than 200 pages');
}

interface World { owner: SignedUp; payees: SignedUp[]; customers: string[]; boundaries: number[]; lists: Record<Resource, Item[]> }

/** One account's transfers, holds and payments, drawn from `seed`, with instants recorded between them. */
async function makeWorld(seed: number): Promise<World> {
  const random = prng(seed);
  const choose = <T>(items: readonly T[]): T => pick(random, items);
  const amount = () => `${1 + Math.floor(random() * 9)}.${String(Math.floor(random() * 100)).padStart(2, '0')}`;
  // Metadata from a small vocabulary, so filters keep some items and not others; a third have none.
  const metadata = (): Record<string, string> => (random() < 0.33 ? {} : {
    order: choose(ORDERS), ...(random() < 0.5 ? { channel: choose(CHANNELS) } : {}), ...(random() < 0.2 ? { 'the key': 'the value' } : {}),
  });
  const { owner, customerId } = await ownerWithCustomer(base(), ['openbank'], { chain_wallet: true });
  const second = (await createCustomer(base(), owner.key)).body.id;
  await linkCustomer(base(), owner.key, second, 'openbank');
  const customers = [customerId, second];
  const payees = await Promise.all([signUp(base()), signUp(base()), signUp(base())]);
  for (const currency of ALL) await fund(base(), owner.key, currency, '500.00');
  // A recorded instant lies at least 3 ms from every item made before or after it, so created_at
  // (microseconds in Postgres, milliseconds in the answers) falls on one side of it everywhere.
  const boundary = async () => {
    await pause(3);
    boundaries.push(Date.now());
    await pause(3);
  };
  const boundaries: number[] = [];
  const transfers: Item[] = [];
  const holds: Item[] = [];
  const payments: Item[] = [];
  await boundary();
  for (let n = 0; n < OPERATIONS; n++) {
    const draw = random();
    if (draw < 0.4) {
      const payee = choose(payees);
      const currency = choose(FIAT);
      // The recipient written in any case: the filter finds it in any other.
      const written = choose([payee.email, payee.email.toUpperCase(), payee.email.replace(/^./, (c) => c.toUpperCase())]);
      const given = metadata();
      const made = await transfer(base(), owner.key, { recipient_email: written, amount: amount(), currency, metadata: given });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      transfers.push({ id: made.body.transfer_id, at: Date.parse(made.body.created_at), currency, metadata: given, status: made.body.status, recipient: payee.email.toLowerCase() });
    } else if (draw < 0.7) {
      const currency = choose(ALL);
      const given = metadata();
      const made = await call(base(), 'POST', '/v1/holds', { amount: amount(), currency, metadata: given }, { token: owner.key, idempotencyKey: randomUUID() });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const hold: Item = { id: made.body.id, at: Date.parse(made.body.created_at), currency, metadata: given, status: 'active' };
      if (random() < 0.3) {
        const voided = await call(base(), 'POST', `/v1/holds/${hold.id}/void`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
        assert.equal(voided.status, 200, JSON.stringify(voided.body));
        hold.status = 'voided';
      }
      holds.push(hold);
    } else {
      const currency = choose(FIAT);
      const customer = choose(customers);
      const given = metadata();
      const made = await call(base(), 'POST', '/v1/payments/add-funds', { customer_id: customer, partner: 'openbank', amount: amount(), currency, metadata: given },
        { token: owner.key, idempotencyKey: randomUUID() });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      payments.push({ id: made.body.id, at: Date.parse(made.body.created_at), currency, metadata: given, customer });
    }
    if (random() < 0.3) await boundary();
  }
  await boundary();
  // Payments settle later and credit the account then: the lists are read once every payment has
  // completed, so neither a payment's status nor the account's transactions move under the reads.
  for (const payment of payments) {
    payment.status = await eventually(async () => {
      const now = (await read(owner.key, `/v1/payments/${payment.id}`)).body;
      return now.status === 'completed' ? now.status : undefined;
    }, 30_000, `payment ${payment.id} to complete`);
  }
  const newestFirst = (items: Item[]) => [...items].reverse();
  const transactions = await transactionsOf(owner, transfers, payments);
  return { owner, payees, customers, boundaries, lists: { transfers: newestFirst(transfers), holds: newestFirst(holds), payments: newestFirst(payments), transactions } };
}

/**
 * The account's transactions, read whole without filters (the model's list: it cannot be made
 * through the API), each transfer's debit in it once, each with the metadata of the transfer or
 * payment it moved (a payment's movement names no payment: its entry's payment is read from Postgres).
 */
async function transactionsOf(owner: SignedUp, transfers: Item[], payments: Item[]): Promise<Item[]> {
  const items: Array<Item & { transfer: string | null }> = [];
  let before: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const response = await read(owner.key, path('transactions', { limit: '200', before }));
    assert.equal(response.status, 200, JSON.stringify(response.body));
    items.push(...response.body.data.map((t: any) => ({ id: t.id, at: Date.parse(t.created_at), currency: t.currency, transfer: t.transfer_id, metadata: {} })));
    if (!response.body.has_more) break;
    before = response.body.next_cursor;
  }
  for (const t of transfers) assert.equal(items.filter((item) => item.transfer === t.id).length, 1, `transfer ${t.id} has one movement`);
  const { rows } = await testService().runtime.db.raw(
    'SELECT p.id, je.payment_id FROM postings p JOIN journal_entries je ON je.id = p.entry_id WHERE p.account_id = ? AND je.payment_id IS NOT NULL', [owner.account.id]);
  const paymentOf = new Map((rows as Array<{ id: string; payment_id: string }>).map((r) => [r.id, r.payment_id]));
  for (const item of items) {
    const owned = transfers.find((t) => t.id === item.transfer) ?? payments.find((p) => p.id === paymentOf.get(item.id));
    item.metadata = owned?.metadata ?? {};
  }
  return items;
}

/** A query drawn for `resource`: each filter present or not, with values that keep items and values that keep none. */
function drawQuery(world: World, resource: Resource, random: () => number): Query {
  const choose = <T>(items: readonly T[]): T => pick(random, items);
  const maybe = <T>(value: () => T, p = 0.5): T | undefined => (random() < p ? value() : undefined);
  const today = dayOf(Date.now());
  const instants = world.boundaries.map((at) => new Date(at).toISOString());
  const query: Query = {
    from: maybe(() => choose([...instants, ...instants, today, dayOf(Date.now() + DAY_MS)])),
    to: maybe(() => choose([...instants, ...instants, today, dayOf(Date.now() - DAY_MS)])),
    currency: maybe(() => choose(ALL), 0.4),
  };
  if (resource === 'transfers') {
    query.status = maybe(() => choose(['completed', 'failed']), 0.2);
    query.recipient_email = maybe(() => {
      const email = choose([...world.payees.map((p) => p.email), 'nobody@example.com']);
      return choose([email, email.toUpperCase()]);
    }, 0.4);
  }
  if (resource === 'holds') query.status = maybe(() => choose(['active', 'voided']), 0.3);
  // One pair or two, each from the vocabulary or one nobody has.
  if (random() < 0.5) {
    query[`metadata[order]`] = choose([...ORDERS, 'Z-0']);
    if (random() < 0.4) query[`metadata[${choose(['channel', 'the key'])}]`] = choose([...CHANNELS, 'the value']);
  }
  if (resource === 'payments') {
    query.status = maybe(() => choose(['completed', 'authorized']), 0.2);
    query.customer_id = maybe(() => choose(world.customers), 0.3);
  }
  // Now and then the pages start at a cursor taken from the list without filters: a place in the
  // list, which the filters may not keep.
  if (world.lists[resource].length > 0) query.before = maybe(() => choose(world.lists[resource]).id, 0.15);
  return query;
}

async function checkLists(world: World, seed: number): Promise<void> {
  const random = prng(seed ^ 0x5eed);
  const resources: Resource[] = ['transfers', 'holds', 'payments', 'transactions'];
  const today = dayOf(Date.now());
  for (const resource of resources) {
    const list = world.lists[resource];
    // Each filter alone first, then combinations drawn from the seed.
    const first = world.boundaries[1] === undefined ? undefined : new Date(world.boundaries[1]).toISOString();
    const fixed: Query[] = [{}, { currency: 'USD' }, { from: today, to: today }, { from: first }, { to: first }, { 'metadata[order]': 'A-17' }, { 'metadata[order]': 'A-18', 'metadata[channel]': 'web' }];
    const queries = [...fixed, ...Array.from({ length: COMBINATIONS }, () => drawQuery(world, resource, random))];
    for (const query of queries) {
      const what = `${path(resource, query)} (${replayOf(seed)})`;
      const { from, to } = windowOf(query);
      if (from >= to) {
        const response = await read(world.owner.key, path(resource, query));
        expectError(response, 400, 'invalid_request', 'from', what);
        continue;
      }
      const limit = pick(random, [1, 3, 5, 8, 50]);
      assert.deepEqual(await allPages(world.owner.key, resource, query, limit), expected(list, query), `${what}, limit ${limit}`);
    }
  }
}

describe('list filters: from, to, currency, metadata, recipient_email (seeded)', () => {
  for (const { seed, tag } of seededCases([1, 2])) {
    it(`each list under generated filters, paged, is the model's (${replayOf(seed)})${tag}`, async function () {
      this.timeout(240_000);
      await namingSeed(seed, async () => checkLists(await makeWorld(seed), seed));
    });
  }

  it('refuses a bad value with 400 invalid_request naming the parameter, and lists nothing', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '10.00');
    const before = await call(base(), 'GET', '/v1/transactions', undefined, { token: owner.key });
    const refusals: Array<[Query, string]> = [
      [{ from: 'yesterday' }, 'from'], [{ to: '2026-02-30' }, 'to'], [{ from: '2026-11-24T10:00:00' }, 'from'], [{ to: '10000-01-01' }, 'to'],
      [{ currency: 'usd' }, 'currency'], [{ currency: 'XYZ' }, 'currency'],
      [{ from: '2026-11-25', to: '2026-11-24' }, 'from'], [{ from: '2026-11-24T10:00:00Z', to: '2026-11-24T10:00:00Z' }, 'from'],
      [{ from: '2026-11-24T10:00:00.001Z', to: '2026-11-24T10:00:00Z' }, 'from'], [{ from: '2026-11-25T00:00:00Z', to: '2026-11-24' }, 'from'],
    ];
    for (const resource of ['transfers', 'transactions', 'payments', 'holds'] as const) {
      for (const [query, details] of [...refusals, ...(resource === 'transfers' ? [[{ recipient_email: 'not-an-email' }, 'recipient_email'] as [Query, string]] : [])]) {
        expectError(await call(base(), 'GET', path(resource, query), undefined, { token: owner.key }), 400, 'invalid_request', details, path(resource, query));
      }
      // recipient_email is the transfers' own: elsewhere it is no parameter.
      if (resource !== 'transfers') expectError(await call(base(), 'GET', path(resource, { recipient_email: owner.email }), undefined, { token: owner.key }), 400, 'invalid_request', 'recipient_email');
      // metadata[<key>]=<value>: one value a key, a key of 1..40 characters, a value of at most 500, never metadata alone.
      const metadataRefusals: Array<[string, string]> = [
        ['metadata[order]=A-17&metadata[order]=A-18', 'metadata.order'], [`metadata[${'k'.repeat(41)}]=v`, `metadata.${'k'.repeat(41)}`],
        [`metadata[note]=${'x'.repeat(501)}`, 'metadata.note'], ['metadata[]=v', 'metadata.'], ['metadata=A-17', 'metadata'],
      ];
      for (const [query, details] of metadataRefusals) {
        expectError(await call(base(), 'GET', `/v1/${resource}?${query}`, undefined, { token: owner.key }), 400, 'invalid_request', details, `${resource}?${query.slice(0, 60)}`);
      }
    }
    // A date's day is in: from and to the same day is that day, not an empty window.
    const [credit] = before.body.data;
    const day = dayOf(Date.parse(credit.created_at));
    assert.deepEqual((await call(base(), 'GET', path('transactions', { from: day, to: day }), undefined, { token: owner.key })).body.data.map((t: { id: string }) => t.id), [credit.id]);
    assert.deepEqual((await call(base(), 'GET', '/v1/transactions', undefined, { token: owner.key })).body, before.body, 'the refusals changed nothing');
  });
});
