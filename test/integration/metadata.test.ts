// Metadata (DESIGN.md section 5h) against the running service: on transfers, batch items,
// reversals, holds, payments, wallets, customers and contacts, set on create and read back ({}
// when none); changed with PATCH (a key set to null removed, the others kept) under an
// Idempotency-Key like the other writes of each surface; its bounds (50 keys, keys of 1..40
// characters, string values of at most 500) refused 400 invalid_request naming the key, changing
// nothing; carried in the events (the stream's list, webhooks, Kafka's Avro) of transfers, holds,
// payments and reversals. A seeded generator of metadata objects and patches, within and past the
// bounds, is checked against a model of the rule written here; TEST_SEED=n replays one seed. The
// list filter metadata[<key>]=<value> with the others and the cursor: list-filters.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ACCOUNT_ID_HEADER, TOPICS } from '../../src/kafka/topics';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { testService } from '../hooks';
import { createCustomer, uniqueEmail, type SignedUp } from '../support/accounts';
import { checkWebhookEvent } from '../support/contract';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { fund } from '../support/money';
import { ownerWithCustomer } from '../support/partner-links';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seededCases } from '../support/seeds';
import { receiversClosedAfterEach, subscribe } from '../support/webhooks';
import { signUp } from '../support/accounts';

const base = () => testService().baseUrl;
type Metadata = Record<string, string>;
const TRIES_MAX = 20;

/**
 * A request as a SPEC.md section 7 client sends it: a 429 waits its Retry-After, and a write the
 * ledger has not decided yet (202) is sent again under the same Idempotency-Key, a bounded number of times.
 */
async function send(owner: SignedUp, method: string, path: string, body?: unknown, idempotencyKey: string | undefined = method === 'GET' ? undefined : randomUUID()): Promise<JsonResponse> {
  for (let tries = 1; ; tries++) {
    const response = await call(base(), method, path, body, { token: owner.key, idempotencyKey });
    if ((response.status !== 429 && response.status !== 202) || tries === TRIES_MAX) return response;
    await new Promise((resolve) => setTimeout(resolve, response.status === 429 ? 1000 * Number(response.headers.get('retry-after') ?? 1) : 100 * tries));
  }
}

const many = (n: number, prefix = 'k'): Metadata => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, `v${i}`]));

/** An object kind with metadata: how one is made (its metadata as given, or none), where it is read and patched. */
interface Kind {
  name: string;
  create(owner: World, metadata?: unknown, key?: string): Promise<JsonResponse>;
  /** The field a refusal of the create names for metadata's `field` (a batch names its item). */
  field?: (field: string) => string;
  /** The path of the object a create answered (a batch item's: its transfer's), read with GET and changed with PATCH. */
  path(created: JsonResponse): string;
  /** Whether it has a PATCH route (a payment's metadata is set when it is made). */
  patchable: boolean;
  /** The list that shows the object, whose length shows that a refused create made nothing. */
  list(world: World): string;
}

interface World { owner: SignedUp; payee: SignedUp; customerId: string; transferId: string }

const withMetadata = (body: Record<string, unknown>, metadata: unknown) => (metadata === undefined ? body : { ...body, metadata });

const KINDS: Kind[] = [
  {
    name: 'transfer', patchable: true, list: () => '/v1/transfers?limit=200',
    create: (w, metadata, key) => send(w.owner, 'POST', '/v1/transfers', withMetadata({ recipient_email: w.payee.email, amount: '1.00', currency: 'USD' }, metadata), key),
    path: (created) => `/v1/transfers/${created.body.transfer_id}`,
  },
  {
    name: 'transfer batch item', patchable: true, list: () => '/v1/transfers?limit=200', field: (field) => `transfers[0].${field}`,
    create: async (w, metadata, key) => {
      const batch = await send(w.owner, 'POST', '/v1/transfer-batches', { atomic: true, transfers: [withMetadata({ recipient_email: w.payee.email, amount: '1.00', currency: 'USD' }, metadata)] }, key);
      if (batch.status >= 300) return batch;
      assert.equal(batch.body.items[0].status, 'created', JSON.stringify(batch.body));
      return send(w.owner, 'GET', `/v1/transfers/${batch.body.items[0].transfer_id}`);
    },
    path: (created) => `/v1/transfers/${created.body.transfer_id}`,
  },
  {
    name: 'reversal', patchable: true, list: (w) => `/v1/transfers/${w.transferId}/reversals`,
    create: (w, metadata, key) => send(w.owner, 'POST', `/v1/transfers/${w.transferId}/reversals`, withMetadata({ amount: '0.01', reason: 'test' }, metadata), key),
    path: (created) => `/v1/transfers/${created.body.transfer_id}/reversals/${created.body.id}`,
  },
  {
    name: 'hold', patchable: true, list: () => '/v1/holds?limit=200',
    create: (w, metadata, key) => send(w.owner, 'POST', '/v1/holds', withMetadata({ amount: '1.00', currency: 'USD' }, metadata), key),
    path: (created) => `/v1/holds/${created.body.id}`,
  },
  {
    name: 'payment', patchable: false, list: () => '/v1/payments?limit=200',
    create: (w, metadata, key) => send(w.owner, 'POST', '/v1/payments/add-funds', withMetadata({ customer_id: w.customerId, partner: 'openbank', amount: '1.00', currency: 'USD' }, metadata), key),
    path: (created) => `/v1/payments/${created.body.id}`,
  },
  {
    name: 'wallet', patchable: true, list: () => '/v1/wallets?limit=200',
    create: (w, metadata, key) => send(w.owner, 'POST', '/v1/wallets', withMetadata({ name: 'Pocket' }, metadata), key),
    path: (created) => `/v1/wallets/${created.body.id}`,
  },
  {
    name: 'customer', patchable: true, list: () => '/v1/customers?limit=200',
    // The email follows the key: a repeated request is the same request.
    create: (w, metadata, key) => send(w.owner, 'POST', '/v1/customers', withMetadata({ email: `customer-${key ?? randomUUID()}@example.com`, business_name: 'Customer Co', country_code: 'DE' }, metadata), key),
    path: (created) => `/v1/customers/${created.body.id}`,
  },
  {
    name: 'contact', patchable: true, list: () => '/v1/contacts?limit=200',
    create: (w, metadata, key) => send(w.owner, 'POST', '/v1/contacts', withMetadata({ name: 'Ada', email: `contact-${key ?? randomUUID()}@example.com` }, metadata), key),
    path: (created) => `/v1/contacts/${created.body.id}`,
  },
];

/** An account funded in USD, a payee, a customer linked with openbank and a completed transfer to reverse. */
async function makeWorld(): Promise<World> {
  const [{ owner, customerId }, payee] = await Promise.all([ownerWithCustomer(base(), ['openbank']), signUp(base())]);
  await fund(base(), owner.key, 'USD', '1000.00');
  const sent = await send(owner, 'POST', '/v1/transfers', { recipient_email: payee.email, amount: '50.00', currency: 'USD' });
  assert.equal(sent.status, 201, JSON.stringify(sent.body));
  return { owner, payee, customerId, transferId: sent.body.transfer_id };
}

const created = (response: JsonResponse, what: string) => assert.ok(response.status === 201 || response.status === 200, `${what}: ${response.status} ${JSON.stringify(response.body)}`);

describe('metadata on every object kind', function () {
  this.timeout(180_000);
  let world: World;
  before(async () => { world = await makeWorld(); });

  it('is set on create and answered on every read, {} when none', async () => {
    for (const kind of KINDS) {
      const metadata = { order_id: `A-${kind.name}`, 'key with spaces': 'x'.repeat(500), ['k'.repeat(40)]: '' };
      const made = await kind.create(world, metadata);
      created(made, kind.name);
      assert.deepEqual(made.body.metadata, metadata, `${kind.name}: the create answer`);
      assert.deepEqual((await send(world.owner, 'GET', kind.path(made))).body.metadata, metadata, `${kind.name}: read back`);
      const listed = (await send(world.owner, 'GET', kind.list(world))).body.data;
      const id = made.body.id ?? made.body.transfer_id;
      assert.deepEqual(listed.find((item: { id?: string; transfer_id?: string }) => (item.id ?? item.transfer_id) === id)?.metadata, metadata, `${kind.name}: in its list`);
      const bare = await kind.create(world);
      created(bare, `${kind.name} without metadata`);
      assert.deepEqual([bare.body.metadata, (await send(world.owner, 'GET', kind.path(bare))).body.metadata], [{}, {}], `${kind.name}: none is {}`);
    }
  });

  it('changes with PATCH: a string sets its key, null removes it, the others are kept; the same key replays, another body under it conflicts', async () => {
    for (const kind of KINDS.filter((k) => k.patchable)) {
      const made = await kind.create(world, { a: '1', b: '2', c: '3' });
      created(made, kind.name);
      const key = randomUUID();
      const patched = await send(world.owner, 'PATCH', kind.path(made), { metadata: { b: null, c: 'three', d: '4', gone: null } }, key);
      assert.equal(patched.status, 200, `${kind.name}: ${JSON.stringify(patched.body)}`);
      assert.deepEqual(patched.body.metadata, { a: '1', c: 'three', d: '4' }, kind.name);
      assert.deepEqual((await send(world.owner, 'GET', kind.path(made))).body.metadata, { a: '1', c: 'three', d: '4' }, `${kind.name}: read back`);
      const again = await send(world.owner, 'PATCH', kind.path(made), { metadata: { b: null, c: 'three', d: '4', gone: null } }, key);
      assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body.metadata], [200, 'true', patched.body.metadata], `${kind.name}: a replay`);
      expectError(await send(world.owner, 'PATCH', kind.path(made), { metadata: { e: '5' } }, key), 409, 'idempotency_conflict', undefined, kind.name);
      assert.deepEqual((await send(world.owner, 'GET', kind.path(made))).body.metadata, { a: '1', c: 'three', d: '4' }, `${kind.name}: the conflict changed nothing`);
    }
    // A payment's metadata is set when it is made: it has no PATCH route.
    const payment = await KINDS.find((k) => k.name === 'payment')!.create(world, { a: '1' });
    assert.equal((await send(world.owner, 'PATCH', `/v1/payments/${payment.body.id}`, { metadata: { a: null } })).status, 405);
  });

  it('refuses metadata past its bounds with 400 invalid_request naming the key, and makes or changes nothing', async () => {
    const refusals: Array<[string, unknown, string]> = [
      ['51 keys', many(51), 'metadata.k50'],
      ['a key of 41 characters', { ['k'.repeat(41)]: 'v' }, `metadata.${'k'.repeat(41)}`],
      ['a value of 501 characters', { note: 'x'.repeat(501) }, 'metadata.note'],
      ['a number', { order_id: 17 }, 'metadata.order_id'],
      ['not an object', 'A-17', 'metadata'],
    ];
    const atBounds = { ...many(49), ['k'.repeat(40)]: 'x'.repeat(500) };
    for (const kind of KINDS) {
      const before = (await send(world.owner, 'GET', kind.list(world))).body.data.length;
      for (const [what, metadata, field] of refusals) {
        expectError(await kind.create(world, metadata), 400, 'invalid_request', kind.field ? kind.field(field) : field, `${kind.name}, ${what}`);
      }
      assert.equal((await send(world.owner, 'GET', kind.list(world))).body.data.length, before, `${kind.name}: the refusals made nothing`);
      const full = await kind.create(world, atBounds);
      created(full, `${kind.name} at the bounds`);
      assert.deepEqual(full.body.metadata, atBounds);
      if (!kind.patchable) continue;
      const patchRefusals: Array<[string, unknown, string]> = [
        ['a 51st key', { k0: 'changed', new_key: 'v' }, 'metadata.new_key'],
        ['a key of 41 characters', { ['k'.repeat(41)]: null }, `metadata.${'k'.repeat(41)}`],
        ['a value of 501 characters', { k1: 'x'.repeat(501) }, 'metadata.k1'],
        ['an object', { k1: { nested: 'v' } }, 'metadata.k1'],
      ];
      for (const [what, metadata, field] of patchRefusals) {
        expectError(await send(world.owner, 'PATCH', kind.path(full), { metadata }), 400, 'invalid_request', field, `${kind.name}: PATCH, ${what}`);
      }
      assert.deepEqual((await send(world.owner, 'GET', kind.path(full))).body.metadata, atBounds, `${kind.name}: the refused patches changed nothing`);
      const swapped = await send(world.owner, 'PATCH', kind.path(full), { metadata: { k0: null, new_key: 'v' } });
      assert.equal(swapped.status, 200, `${kind.name}: one key out, one in: still 50 (${JSON.stringify(swapped.body)})`);
      assert.equal(Object.keys(swapped.body.metadata).length, 50);
    }
  });

  it('replays a create with metadata under its Idempotency-Key, and refuses the key with other metadata', async () => {
    for (const kind of KINDS.filter((k) => k.name !== 'transfer batch item')) {
      const key = randomUUID();
      const first = await kind.create(world, { order_id: 'A-17' }, key);
      created(first, kind.name);
      const again = await kind.create(world, { order_id: 'A-17' }, key);
      assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body.metadata], [200, 'true', { order_id: 'A-17' }], `${kind.name}: a replay`);
      expectError(await kind.create(world, { order_id: 'A-18' }, key), 409, 'idempotency_conflict', undefined, kind.name);
    }
  });
});

describe('metadata in events', function () {
  this.timeout(120_000);
  const receiver = receiversClosedAfterEach();

  it('carries the resource\'s metadata in its events: webhooks, the event list and Kafka\'s domain.events (Avro)', async () => {
    const world = await makeWorld();
    const hook = await receiver();
    await subscribe(world.owner, hook.url);
    const transfer = await send(world.owner, 'POST', '/v1/transfers', { recipient_email: world.payee.email, amount: '2.00', currency: 'USD', metadata: { order_id: 'A-17' } });
    const hold = await send(world.owner, 'POST', '/v1/holds', { amount: '3.00', currency: 'USD', metadata: { booking: 'B-12' } });
    const payment = await send(world.owner, 'POST', '/v1/payments/add-funds', { customer_id: world.customerId, partner: 'openbank', amount: '4.00', currency: 'USD', metadata: { invoice: 'I-9' } });
    // Changed before it is reversed: the reversal's event carries the transfer's metadata as it is then.
    assert.equal((await send(world.owner, 'PATCH', `/v1/transfers/${transfer.body.transfer_id}`, { metadata: { order_id: 'A-18', note: 'moved' } })).status, 200);
    const reversal = await send(world.owner, 'POST', `/v1/transfers/${transfer.body.transfer_id}/reversals`, { amount: '1.00', metadata: { ticket: 'T-1' } });
    assert.deepEqual([transfer.status, hold.status, payment.status, reversal.status], [201, 201, 201, 201]);

    const expected: Array<[string, string, Metadata]> = [
      ['transfer.completed', transfer.body.transfer_id, { order_id: 'A-17' }], ['hold.created', hold.body.id, { booking: 'B-12' }],
      ['payment.completed', payment.body.id, { invoice: 'I-9' }], ['transfer.reversed', transfer.body.transfer_id, { order_id: 'A-18', note: 'moved' }],
    ];
    for (const [type, id, metadata] of expected) {
      const [{ event }] = await hook.waitFor(1, (r) => r.event.type === type && r.event.resource_id === id, 30_000);
      assert.deepEqual(event.data.metadata, metadata, `the webhook of ${type}`);
      await checkWebhookEvent(base(), event);
      if (type === 'transfer.reversed') assert.deepEqual(event.data.reversal_metadata, { ticket: 'T-1' });
    }
    const balances = hook.received.filter((r) => r.event.type === 'balance.updated');
    assert.ok(balances.length > 0 && balances.every((r) => !('metadata' in r.event.data)), 'a balance has no metadata');

    const listed = (await send(world.owner, 'GET', '/v1/events?limit=100')).body.data as DomainEventEnvelope[];
    for (const [type, id, metadata] of expected) assert.deepEqual(listed.find((e) => e.type === type && e.resource_id === id)?.data.metadata, metadata, `GET /v1/events: ${type}`);

    // On Kafka, decoded by the schema id each message carries (domain.events v7's map).
    const { runtime } = testService();
    const seen: DomainEventEnvelope[] = [];
    const reader = runtime.kafka.consumer({ groupId: `${runtime.names.prefix}metadata-reader.${randomUUID()}`, maxWaitTimeInMs: 50 });
    try {
      await reader.connect();
      await reader.subscribe({ topic: runtime.names.full(TOPICS.domainEvents), fromBeginning: true });
      await reader.run({ eachMessage: async ({ message }) => {
        if (message.headers?.[ACCOUNT_ID_HEADER]?.toString() === world.owner.account.id) seen.push(await runtime.codec.decode<DomainEventEnvelope>(message.value!));
      } });
      for (const [type, id, metadata] of expected) {
        const event = await eventually(async () => seen.find((e) => e.type === type && e.resource_id === id), 30_000, `${type} on domain.events`);
        assert.deepEqual({ ...event.data.metadata }, metadata, `Kafka: ${type}`);
      }
      assert.equal(seen.find((e) => e.type === 'balance.updated')?.data.metadata ?? null, null);
    } finally {
      await reader.disconnect();
    }
  });
});

/**
 * The rule of DESIGN.md section 5h, written again here as the model: the field a create (or a
 * patch) of `value` is refused naming, or null. The count first, then each key's length, then each
 * value, as the API reports them.
 */
function modelRefusal(value: unknown, patch: boolean, current: Metadata = {}): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'metadata';
  const entries = Object.entries(value);
  if (entries.length > 50) return `metadata.${entries[50][0]}`;
  const long = entries.find(([key]) => [...key].length < 1 || [...key].length > 40);
  if (long) return `metadata.${long[0]}`;
  const bad = entries.find(([, v]) => !((typeof v === 'string' && [...v].length <= 500) || (patch && v === null)));
  if (bad) return `metadata.${bad[0]}`;
  const after = applied(current, value as Record<string, string | null>);
  if (Object.keys(after).length > 50) {
    const added = entries.filter(([key, v]) => v !== null && !Object.hasOwn(current, key)).map(([key]) => key);
    return `metadata.${added[added.length - (Object.keys(after).length - 50)]}`;
  }
  return null;
}

function applied(current: Metadata, patch: Record<string, string | null>): Metadata {
  const next = new Map(Object.entries(current));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) next.delete(key);
    else next.set(key, value);
  }
  return Object.fromEntries(next);
}

/** Metadata drawn near the bounds: mostly within them, now and then one key, value or count past one. */
function drawMetadata(random: () => number, patch: boolean, current: Metadata): Record<string, unknown> {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const existing = Object.keys(current);
  const count = random() < 0.1 ? 48 + Math.floor(random() * 5) : Math.floor(random() * 5);
  const drawn: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const key = patch && existing.length > 0 && random() < 0.4 ? pick(existing) : `${pick(['order', 'ref', 'é', '💸'])}${i}`.padEnd(random() < 0.05 ? 41 : 1 + Math.floor(random() * 8), 'x');
    const draw = random();
    drawn[key] = patch && draw < 0.3 ? null : draw < 0.35 ? pick([17, true, ['a']]) : 'v'.repeat(random() < 0.05 ? 501 : Math.floor(random() * 10));
  }
  return drawn;
}

describe('metadata against a model (seeded)', function () {
  this.timeout(240_000);
  const OPERATIONS = 30;
  for (const { seed, tag } of seededCases([21, 22])) {
    it(`creates and patches drawn metadata on drawn objects as the model says, each refusal naming its key (${replayOf(seed)})${tag}`, async () => {
      await namingSeed(seed, async () => {
        const world = await makeWorld();
        const random = prng(seed);
        const objects: Array<{ kind: Kind; path: string; metadata: Metadata }> = [];
        const patchable = KINDS.filter((k) => k.patchable);
        const tally = { created: 0, patched: 0, refused: 0 };
        for (let n = 0; n < OPERATIONS; n++) {
          const patch = objects.length > 0 && random() < 0.6;
          const target = patch ? objects[Math.floor(random() * objects.length)] : null;
          const kind = target?.kind ?? patchable[Math.floor(random() * patchable.length)];
          const value = drawMetadata(random, patch, target?.metadata ?? {});
          const refusal = modelRefusal(value, patch, target?.metadata);
          const what = `${replayOf(seed)}, operation ${n}: ${patch ? 'PATCH' : 'create'} ${kind.name} ${JSON.stringify(value).slice(0, 300)}`;
          const response = target ? await send(world.owner, 'PATCH', target.path, { metadata: value }) : await kind.create(world, value);
          if (refusal !== null) {
            expectError(response, 400, 'invalid_request', kind.field && !target ? kind.field(refusal) : refusal, what);
            tally.refused++;
          } else {
            assert.ok(response.status === 200 || response.status === 201, `${what}: ${response.status} ${JSON.stringify(response.body)}`);
            const expected = target ? applied(target.metadata, value as Record<string, string | null>) : (value as Metadata);
            assert.deepEqual(response.body.metadata, expected, what);
            if (target) target.metadata = expected;
            else objects.push({ kind, path: kind.path(response), metadata: expected });
            tally[target ? 'patched' : 'created']++;
          }
        }
        console.log(`      metadata seed ${seed}: ${tally.created} created, ${tally.patched} patched, ${tally.refused} refused as the model said`);
        for (const object of objects) assert.deepEqual((await send(world.owner, 'GET', object.path)).body.metadata, object.metadata, `${replayOf(seed)}: ${object.path} read back`);
      });
    });
  }
});

describe('metadata: transactions found by the metadata of their own transfer or payment', () => {
  it('finds the movements of the account\'s own transfer, never those of another account\'s transfer to it', async () => {
    const world = await makeWorld();
    const sent = await send(world.owner, 'POST', '/v1/transfers', { recipient_email: world.payee.email, amount: '3.00', currency: 'USD', metadata: { order_id: 'A-17' } });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const movements = (owner: SignedUp) => send(owner, 'GET', '/v1/transactions?metadata%5Border_id%5D=A-17').then((r) => r.body.data.map((t: { transfer_id: string; direction: string }) => [t.transfer_id, t.direction]));
    assert.deepEqual(await movements(world.owner), [[sent.body.transfer_id, 'debit']]);
    assert.deepEqual(await movements(world.payee), [], 'the payee received it, but the metadata is the sender\'s');
  });
});

describe('metadata: a customer created again by email', () => {
  it('answers the existing customer with its metadata as it is: a create does not change it', async () => {
    const owner = await signUp(base());
    const email = uniqueEmail('customer');
    const first = await createCustomer(base(), owner.key, { email, metadata: { crm_id: 'C-1' } });
    const again = await createCustomer(base(), owner.key, { email, metadata: { crm_id: 'C-2' } });
    assert.deepEqual([first.status, again.status, again.body.id, again.body.metadata], [201, 200, first.body.id, { crm_id: 'C-1' }]);
  });
});
