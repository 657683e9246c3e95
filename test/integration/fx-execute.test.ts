// Executing persisted FX quotes (DESIGN.md section 5b) against the real stack: the ledger converts
// inside the caller's account through the FX desk, in one entry that balances per currency, and
// consumes the quote with it, exactly once, whoever races and whatever Redis forgets. The
// movements show in /v1/transactions, on the event stream and on ledger.entries.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money } from '../../ledger/money';
import type { Consumer } from 'kafkajs';
import { startConsumer } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import { testService } from '../hooks';
import { createKey, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { fund } from '../support/money';
import { openEventStream } from '../support/sse';

interface EntryMessage { id: string; kind: string; postings: Array<{ ledger_account_code: string; currency: string; amount: string }> }

describe('FX execution', () => {
  const base = () => testService().baseUrl;
  const runtime = () => testService().runtime;

  const quote = async (key: string, body: Record<string, string>) => {
    const response = await call(base(), 'POST', '/v1/fx/quote', body, { token: key, idempotencyKey: randomUUID() });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    return response.body;
  };
  const execute = (key: string, quoteId: unknown, idempotencyKey = randomUUID()) =>
    call(base(), 'POST', '/v1/fx/execute', { quote_id: quoteId }, { token: key, idempotencyKey });
  /** The currencies the account holds money in, with their available balance, as the API reads them. */
  const available = async (owner: SignedUp): Promise<Record<string, string>> => {
    const response = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: owner.token });
    const held = response.body.breakdown.filter((b: { available: string; pending: string }) => !new Money(b.available).plus(b.pending).isZero());
    return Object.fromEntries(held.map((b: { currency: string; available: string }) => [b.currency, b.available]));
  };

  let entries: EntryMessage[];
  let entryReader: Consumer;
  before(async function () {
    this.timeout(30_000);
    entries = [];
    entryReader = await startConsumer<EntryMessage>(runtime(), {
      groupId: `${runtime().names.prefix}fx-entries.${randomUUID()}`, topic: TOPICS.ledgerEntries, fromBeginning: false,
      handleBatch: async (messages) => { entries.push(...messages.map((m) => m.value)); },
    });
  });
  after(async () => entryReader?.disconnect());
  afterEach(async () => assert.deepEqual(await violations(runtime().db), {}, 'the ledger invariants hold'));

  it('converts at the locked rate in one entry: 201, the quote consumed, two transactions, balances, events, ledger.entries', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'EUR', '1000.00');
    const stream = await openEventStream(base(), owner.token);
    try {
      const locked = await quote(owner.key, { from_currency: 'EUR', to_currency: 'GBP', from_amount: '400.00' });
      const key = randomUUID();
      const executed = await execute(owner.key, locked.id, key);
      assert.equal(executed.status, 201, JSON.stringify(executed.body));
      const { quote: consumed, entry_id, debit_transaction_id, credit_transaction_id } = executed.body;
      assert.equal(consumed.status, 'consumed');
      assert.deepEqual({ ...consumed, status: 'created', consumed_at: null }, locked, 'the quote as locked, now consumed');
      assert.ok(Date.parse(consumed.consumed_at) <= Date.now());

      assert.deepEqual(await available(owner), { EUR: '600.00', GBP: locked.to_amount });
      const debit = (await call(base(), 'GET', `/v1/transactions/${debit_transaction_id}`, undefined, { token: owner.key })).body;
      const credit = (await call(base(), 'GET', `/v1/transactions/${credit_transaction_id}`, undefined, { token: owner.key })).body;
      assert.deepEqual([debit.type, debit.direction, debit.amount, debit.currency, debit.entry_id, debit.balance_after], ['fx_conversion', 'debit', '400.00', 'EUR', entry_id, '600.00']);
      assert.deepEqual([credit.type, credit.direction, credit.amount, credit.currency, credit.entry_id], ['fx_conversion', 'credit', locked.to_amount, 'GBP', entry_id]);
      const listed = (await call(base(), 'GET', '/v1/transactions?limit=2', undefined, { token: owner.key })).body.data.map((t: { id: string }) => t.id);
      assert.deepEqual(new Set(listed), new Set([debit_transaction_id, credit_transaction_id]), 'the newest transactions are the conversion');

      const events = [await stream.nextEvent(), await stream.nextEvent()].map((frame) => JSON.parse(frame.data));
      assert.deepEqual(events.map((e) => [e.type, e.data.currency, e.data.available]).sort(),
        [['balance.updated', 'EUR', '600.00'], ['balance.updated', 'GBP', locked.to_amount]]);

      const entry = await eventually(async () => entries.find((e) => e.id === entry_id), 15_000, 'the conversion on ledger.entries');
      assert.equal(entry.kind, 'fx_conversion');
      const sums = new Map<string, InstanceType<typeof Money>>();
      for (const p of entry.postings) sums.set(p.currency, (sums.get(p.currency) ?? new Money(0)).plus(p.amount));
      assert.deepEqual([...sums].map(([c, total]) => [c, total.toFixed()]).sort(), [['EUR', '0'], ['GBP', '0']], 'each currency balances on its own');
      const spread = entry.postings.find((p) => p.ledger_account_code === 'sys:fx:spread:GBP');
      const paid = entry.postings.find((p) => p.ledger_account_code === 'sys:fx:position:GBP')!;
      const atMid = new Money('400').times(locked.mid_rate);
      assert.ok(new Money(paid.amount).negated().minus(atMid).abs().isLessThanOrEqualTo('0.005'), 'the desk pays out at the mid-rate');
      assert.equal(new Money(spread?.amount ?? 0).toFixed(2), new Money(paid.amount).negated().minus(locked.to_amount).toFixed(2), 'and keeps the rest as spread');

      const replay = await execute(owner.key, locked.id, key);
      assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed')], [200, 'true']);
      assert.deepEqual(replay.body, executed.body, 'a replay answers the same body');
      expectError(await execute(owner.key, locked.id), 409, 'quote_already_consumed', locked.id);
      assert.equal((await call(base(), 'GET', `/v1/fx/quotes/${locked.id}`, undefined, { token: owner.key })).body.status, 'consumed');
      assert.deepEqual(await available(owner), { EUR: '600.00', GBP: locked.to_amount }, 'nothing moved twice');
    } finally {
      stream.close();
    }
  });

  it('gives exactly one winner when many executes race on one quote', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '100.00');
    const locked = await quote(owner.key, { from_currency: 'USD', to_currency: 'EUR', from_amount: '60.00' });
    const answers = await Promise.all(Array.from({ length: 12 }, () => execute(owner.key, locked.id)));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, ...Array(11).fill(409)], JSON.stringify(answers.map((a) => a.body)));
    for (const loser of answers.filter((a) => a.status === 409)) expectError(loser, 409, 'quote_already_consumed', locked.id);
    assert.deepEqual(await available(owner), { USD: '40.00', EUR: locked.to_amount });
  });

  it('executes a quote whose Redis lock vanished: the record decides', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'GBP', '50.00');
    const locked = await quote(owner.key, { from_currency: 'GBP', to_currency: 'USD', from_amount: '50.00' });
    // Every key of this service gone: locks, cached idempotency answers, cached keys.
    const keys = await runtime().redis.keys(`${runtime().config.redisKeyPrefix}*`);
    assert.ok(keys.length > 0);
    await runtime().redis.del(...keys.map((k) => k.slice(runtime().config.redisKeyPrefix.length)));
    const key = randomUUID();
    const executed = await execute(owner.key, locked.id, key);
    assert.equal(executed.status, 201, JSON.stringify(executed.body));
    assert.deepEqual(await available(owner), { USD: locked.to_amount });
    await runtime().redis.del(...(await runtime().redis.keys(`${runtime().config.redisKeyPrefix}*`)).map((k) => k.slice(runtime().config.redisKeyPrefix.length)));
    const replay = await execute(owner.key, locked.id, key);
    assert.deepEqual([replay.status, replay.body], [200, executed.body], 'the replay survives Redis forgetting it too');
  });

  it('refuses an expired quote with 422 quote_expired, and moves nothing', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '10.00');
    const locked = await quote(owner.key, { from_currency: 'USD', to_currency: 'GBP', from_amount: '10.00' });
    const expired = await call(base(), 'POST', `/v1/sandbox/fx/quotes/${locked.id}/expire`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(expired.body.status, 'expired');
    expectError(await execute(owner.key, locked.id), 422, 'quote_expired', locked.id);
    assert.deepEqual(await available(owner), { USD: '10.00' });
    const after = (await call(base(), 'GET', `/v1/fx/quotes/${locked.id}`, undefined, { token: owner.key })).body;
    assert.deepEqual([after.status, after.consumed_at], ['expired', null]);
  });

  it('refuses with 422 insufficient_funds and moves nothing; the quote stays executable', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'EUR', '10.00');
    const locked = await quote(owner.key, { from_currency: 'EUR', to_currency: 'USD', from_amount: '10.01' });
    expectError(await execute(owner.key, locked.id), 422, 'insufficient_funds', 'quote_id');
    assert.deepEqual(await available(owner), { EUR: '10.00' });
    assert.equal((await call(base(), 'GET', `/v1/fx/quotes/${locked.id}`, undefined, { token: owner.key })).body.status, 'created');
    await fund(base(), owner.key, 'EUR', '0.01');
    assert.equal((await execute(owner.key, locked.id)).status, 201);
    assert.deepEqual(await available(owner), { USD: locked.to_amount });
  });

  it("answers 404 quote_not_found for an unknown quote and for another account's, which stays untouched", async () => {
    const [owner, stranger] = await Promise.all([signUp(base()), signUp(base())]);
    await Promise.all([fund(base(), owner.key, 'USD', '5.00'), fund(base(), stranger.key, 'USD', '5.00')]);
    const locked = await quote(owner.key, { from_currency: 'USD', to_currency: 'EUR', from_amount: '5.00' });
    expectError(await execute(stranger.key, locked.id), 404, 'quote_not_found', locked.id);
    expectError(await execute(owner.key, randomUUID()), 404, 'quote_not_found');
    assert.deepEqual(await available(stranger), { USD: '5.00' });
    assert.equal((await execute(owner.key, locked.id)).status, 201, 'the owner still can');
  });

  it('converts tiny and large amounts in every pair, each exact to the cent and in balance', async () => {
    const owner = await signUp(base());
    const pairs = [['USD', 'EUR'], ['EUR', 'USD'], ['USD', 'GBP'], ['GBP', 'USD'], ['EUR', 'GBP'], ['GBP', 'EUR']];
    // The largest fits the faucet's bound of one credit (1,000,000).
    for (const amount of ['0.02', '987654.09']) {
      for (const [from, to] of pairs) {
        await fund(base(), owner.key, from, amount);
        const before = await available(owner);
        const locked = await quote(owner.key, { from_currency: from, to_currency: to, from_amount: amount });
        assert.equal(locked.to_amount, new Money(amount).times(locked.rate).decimalPlaces(2, Money.ROUND_DOWN).toFixed(2));
        const executed = await execute(owner.key, locked.id);
        assert.equal(executed.status, 201, `${amount} ${from}→${to}: ${JSON.stringify(executed.body)}`);
        const after = await available(owner);
        assert.equal(after[from] ?? '0.00', new Money(before[from]).minus(amount).toFixed(2), `${amount} ${from}→${to} debits exactly`);
        assert.equal(after[to], new Money(before[to] ?? 0).plus(locked.to_amount).toFixed(2), `${amount} ${from}→${to} credits exactly`);
      }
    }
  });

  it('checks the body, the key and its scopes before anything moves', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '5.00');
    const locked = await quote(owner.key, { from_currency: 'USD', to_currency: 'EUR', from_amount: '5.00' });
    expectError(await call(base(), 'POST', '/v1/fx/execute', {}, { token: owner.key, idempotencyKey: randomUUID() }), 400, 'invalid_request', 'quote_id');
    expectError(await execute(owner.key, 'not-a-uuid'), 400, 'invalid_request', 'quote_id');
    expectError(await execute(owner.key, 42), 400, 'invalid_request', 'quote_id');
    expectError(await call(base(), 'POST', '/v1/fx/execute', { quote_id: locked.id }, { token: owner.key }), 400, 'idempotency_key_missing');
    const publishable = await createKey(base(), owner.token, 'publishable');
    const reader = await createKey(base(), owner.token, 'restricted', ['fx:read']);
    const writer = await createKey(base(), owner.token, 'restricted', ['fx:write']);
    expectError(await execute(publishable.key, locked.id), 403, 'publishable_key_write_denied');
    expectError(await execute(reader.key, locked.id), 403, 'insufficient_scope');
    assert.deepEqual(await available(owner), { USD: '5.00' });
    assert.equal((await execute(writer.key, locked.id)).status, 201, 'fx:write may execute');
  });
});
