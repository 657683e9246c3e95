// Wallets (DESIGN.md section 5g): named pockets of one account, money moved between them and the
// main balance through the ledger (POST /v1/wallet-transfers), their balances and ledger entries,
// closing only when empty, and the rules every new route keeps: credentials, scopes, pk_ refusal,
// 400 naming the field, replay and conflict under one Idempotency-Key.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money } from '../../ledger/money';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectCredentialRules, type RouteAccess } from '../support/access';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { balances, fund, payerAndPayee } from '../support/money';

const base = () => testService().baseUrl;

async function createWallet(key: string, name = 'Savings', metadata?: Record<string, string>): Promise<string> {
  const response = await call(base(), 'POST', '/v1/wallets', { name, ...(metadata ? { metadata } : {}) }, { token: key, idempotencyKey: randomUUID() });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.id;
}

function move(key: string, from: string, to: string, amount: string, currency = 'USD', idempotencyKey = randomUUID(), extra: Record<string, unknown> = {}) {
  return call(base(), 'POST', '/v1/wallet-transfers', { from_wallet_id: from, to_wallet_id: to, amount, currency, ...extra }, { token: key, idempotencyKey });
}

async function walletBalance(key: string, walletId: string, currency = 'USD'): Promise<{ available: string; held: string; pending: string }> {
  const response = await call(base(), 'GET', `/v1/wallets/${walletId}/balances`, undefined, { token: key });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.equal(response.body.wallet_id, walletId);
  return response.body.balances.find((b: { currency: string }) => b.currency === currency) ?? { available: '0.00', held: '0.00', pending: '0.00' };
}

describe('wallets', () => {
  let alice: SignedUp;
  let bob: SignedUp;
  before(async () => {
    [alice, bob] = await payerAndPayee(base(), 'USD', '1000.00');
  });

  it('creates, lists, reads, renames and closes a wallet only once it is empty', async () => {
    const id = await createWallet(alice.key, 'Rent', { purpose: 'rent' });
    const got = await call(base(), 'GET', `/v1/wallets/${id}`, undefined, { token: alice.key });
    assert.equal(got.status, 200);
    assert.deepEqual([got.body.name, got.body.metadata, got.body.status, got.body.closed_at], ['Rent', { purpose: 'rent' }, 'open', null]);
    const listed = await call(base(), 'GET', '/v1/wallets?limit=200', undefined, { token: alice.key });
    assert.ok(listed.body.data.some((w: { id: string }) => w.id === id));

    const renamed = await call(base(), 'PATCH', `/v1/wallets/${id}`, { name: 'Rent 2027' }, { token: alice.key, idempotencyKey: randomUUID() });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.name, 'Rent 2027');

    assert.equal((await move(alice.key, 'main', id, '5.00')).status, 201);
    expectError(await call(base(), 'POST', `/v1/wallets/${id}/close`, undefined, { token: alice.key, idempotencyKey: randomUUID() }), 409, 'wallet_not_empty', 'wallet_id');
    assert.equal((await move(alice.key, id, 'main', '5.00')).status, 201);
    const closed = await call(base(), 'POST', `/v1/wallets/${id}/close`, undefined, { token: alice.key, idempotencyKey: randomUUID() });
    assert.equal(closed.status, 200, JSON.stringify(closed.body));
    assert.equal(closed.body.status, 'closed');
    expectError(await move(alice.key, 'main', id, '1.00'), 404, 'wallet_not_found', 'to_wallet_id', 'money into a closed wallet');
    expectError(await call(base(), 'PATCH', `/v1/wallets/${id}`, { name: 'x' }, { token: alice.key, idempotencyKey: randomUUID() }), 409, 'wallet_closed');
  });

  it('moves money main → wallet → another account\'s wallet → main through the ledger: balances, entries, events, a balanced journal', async () => {
    const carol = await signUp(base());
    await fund(base(), carol.key, 'USD', '100.00');
    const pocket = await createWallet(carol.key, 'Pocket');
    const bobs = await createWallet(bob.key, 'Bob\'s');

    const first = await move(carol.key, 'main', pocket, '60.00', 'USD', randomUUID(), { description: 'set aside' });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.deepEqual({ ...first.body, id: undefined, created_at: undefined }, {
      id: undefined, created_at: undefined, from_wallet_id: 'main', to_wallet_id: pocket, amount: '60.00', currency: 'USD', description: 'set aside', status: 'completed',
    });
    assert.equal((await move(carol.key, pocket, bobs, '25.50')).status, 201);
    assert.equal((await move(carol.key, pocket, 'main', '4.50')).status, 201);

    assert.deepEqual(await walletBalance(carol.key, pocket), { currency: 'USD', available: '30.00', held: '0.00', pending: '0.00' });
    assert.deepEqual(await walletBalance(bob.key, bobs), { currency: 'USD', available: '25.50', held: '0.00', pending: '0.00' });
    assert.deepEqual(await walletBalance(carol.key, 'main'), { currency: 'USD', available: '44.50', held: '0.00', pending: '0.00' });
    assert.equal((await balances(base(), carol.token)).USD.available, '44.50', 'the account\'s balance is its main balance');
    assert.equal((await balances(base(), bob.token)).USD.available, '0.00', 'money in a wallet is not in the main balance');

    const newest = await call(base(), 'GET', `/v1/wallets/${pocket}/ledger-entries?limit=2`, undefined, { token: carol.key });
    assert.equal(newest.status, 200);
    assert.deepEqual(newest.body.data.map((e: { amount: string }) => e.amount), ['-4.50', '-25.50']);
    assert.equal(newest.body.has_more, true);
    const rest = await call(base(), 'GET', `/v1/wallets/${pocket}/ledger-entries?limit=2&before=${newest.body.next_cursor}`, undefined, { token: carol.key });
    assert.deepEqual(rest.body.data.map((e: { amount: string; balance_after: string }) => [e.amount, e.balance_after]), [['60.00', '60.00']]);
    const oldest = await call(base(), 'GET', `/v1/wallets/${pocket}/ledger-entries?order=asc`, undefined, { token: carol.key });
    assert.deepEqual(oldest.body.data.map((e: { amount: string }) => e.amount), ['60.00', '-25.50', '-4.50']);
    assert.equal(oldest.body.data[0].entry_id, first.body.id, 'the entry is the wallet transfer');
    assert.equal(oldest.body.data[0].kind, 'wallet_transfer');

    const { db } = testService().runtime;
    const sums = await db('postings').whereIn('entry_id', db('postings as p').join('ledger_accounts as la', 'la.id', 'p.ledger_account_id').where('la.wallet_id', pocket).select('p.entry_id'))
      .groupBy('entry_id', 'currency').select('entry_id', db.raw('sum(amount)::text AS total'));
    assert.equal(sums.length, 3);
    for (const row of sums) assert.ok(new Money(row.total).isZero(), `entry ${row.entry_id} balances`);

    const events = await db('account_events').where('account_id', bob.account.id).select('payload');
    const walletEvents = events.map((e) => e.payload).filter((p) => p.type === 'balance.updated' && JSON.parse(p.data.attributes).wallet_id === bobs);
    assert.equal(walletEvents.length, 1, 'the destination account is told of its wallet\'s balance');
    assert.deepEqual(JSON.parse(walletEvents[0].data.attributes), { wallet_id: bobs, available: '25.50', held: '0.00', pending: '0.00' });
  });

  it('refuses what it must, changing nothing: insufficient funds, another account\'s wallet, the same wallet twice', async () => {
    const dave = await signUp(base());
    await fund(base(), dave.key, 'USD', '10.00');
    const own = await createWallet(dave.key);
    const bobs = await createWallet(bob.key);
    expectError(await move(dave.key, 'main', own, '10.01'), 422, 'insufficient_funds', 'amount');
    expectError(await move(dave.key, own, 'main', '0.01'), 422, 'insufficient_funds', 'amount');
    expectError(await move(dave.key, bobs, 'main', '1.00'), 404, 'wallet_not_found', 'from_wallet_id', 'another account\'s wallet as the source');
    expectError(await move(dave.key, 'main', randomUUID(), '1.00'), 404, 'wallet_not_found', 'to_wallet_id');
    expectError(await move(dave.key, own, own, '1.00'), 400, 'invalid_request', 'to_wallet_id');
    expectError(await call(base(), 'GET', `/v1/wallets/${bobs}`, undefined, { token: dave.key }), 404, 'wallet_not_found', 'wallet_id');
    expectError(await call(base(), 'GET', `/v1/wallets/${bobs}/balances`, undefined, { token: dave.key }), 404, 'wallet_not_found');
    expectError(await call(base(), 'GET', `/v1/wallets/${bobs}/ledger-entries`, undefined, { token: dave.key }), 404, 'wallet_not_found');
    expectError(await call(base(), 'PATCH', `/v1/wallets/${bobs}`, { name: 'mine' }, { token: dave.key, idempotencyKey: randomUUID() }), 404, 'wallet_not_found');
    expectError(await call(base(), 'POST', `/v1/wallets/${bobs}/close`, undefined, { token: dave.key, idempotencyKey: randomUUID() }), 404, 'wallet_not_found');
    assert.equal((await balances(base(), dave.token)).USD.available, '10.00');
    assert.equal((await walletBalance(dave.key, own)).available, '0.00');
  });

  it('answers credentials, scopes and pk_ keys on every route, and 400 naming the field', async () => {
    const erin = await signUp(base());
    const wallet = await createWallet(erin.key);
    const routes: RouteAccess[] = [
      ['POST', '/v1/wallets', { name: 'x' }, 'write'], ['GET', '/v1/wallets', undefined, 'read'], ['GET', `/v1/wallets/${wallet}`, undefined, 'read'],
      ['PATCH', `/v1/wallets/${wallet}`, { name: 'y' }, 'write'], ['POST', `/v1/wallets/${wallet}/close`, undefined, 'write'],
      ['GET', `/v1/wallets/${wallet}/balances`, undefined, 'read'], ['GET', `/v1/wallets/${wallet}/ledger-entries`, undefined, 'read'],
      ['POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: wallet, amount: '1.00', currency: 'USD' }, 'write'],
    ];
    await expectCredentialRules(base(), erin, 'wallets', 'transfers:write', routes);
    const bad: Array<[string, string, unknown, string]> = [
      ['POST', '/v1/wallets', {}, 'name'], ['POST', '/v1/wallets', { name: '' }, 'name'], ['POST', '/v1/wallets', { name: 'x', metadata: { k: 1 } }, 'metadata.k'],
      ['PATCH', `/v1/wallets/${wallet}`, { nickname: 'x' }, 'nickname'],
      ['POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: wallet, amount: '1.001', currency: 'USD' }, 'amount'],
      ['POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: wallet, amount: 1, currency: 'USD' }, 'amount'],
      ['POST', '/v1/wallet-transfers', { from_wallet_id: 'Main', to_wallet_id: wallet, amount: '1.00', currency: 'USD' }, 'from_wallet_id'],
      ['POST', '/v1/wallet-transfers', { from_wallet_id: 'main', amount: '1.00', currency: 'USD' }, 'to_wallet_id'],
      ['POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: wallet, amount: '1.00', currency: 'XYZ' }, 'currency'],
      ['GET', '/v1/wallets/not-a-uuid', undefined, 'wallet_id'],
      ['GET', `/v1/wallets/${wallet}/ledger-entries?order=sideways`, undefined, 'order'],
    ];
    for (const [method, path, body, field] of bad) {
      const response = await call(base(), method, path, body, { token: erin.key, idempotencyKey: randomUUID() });
      assert.equal(response.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.details, field, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(response.body)}`);
    }
  });

  it('replays each write under its Idempotency-Key and refuses another body under it with 409', async () => {
    const frank = await signUp(base());
    await fund(base(), frank.key, 'USD', '20.00');
    const wallet = await createWallet(frank.key);
    const writes: Array<[string, string, unknown, unknown]> = [
      ['POST', '/v1/wallets', { name: 'a' }, { name: 'b' }],
      ['PATCH', `/v1/wallets/${wallet}`, { name: 'c' }, { name: 'd' }],
      ['POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: wallet, amount: '3.00', currency: 'USD' }, { from_wallet_id: 'main', to_wallet_id: wallet, amount: '4.00', currency: 'USD' }],
    ];
    for (const [method, path, body, other] of writes) {
      const idempotencyKey = randomUUID();
      const first = await call(base(), method, path, body, { token: frank.key, idempotencyKey });
      assert.ok(first.status === 201 || first.status === 200, `${method} ${path}: ${JSON.stringify(first.body)}`);
      const again = await call(base(), method, path, body, { token: frank.key, idempotencyKey });
      assert.equal(again.status, 200, `${method} ${path} replayed`);
      assert.deepEqual(again.body, first.body, `${method} ${path} replayed`);
      expectError(await call(base(), method, path, other, { token: frank.key, idempotencyKey }), 409, 'idempotency_conflict', undefined, `${method} ${path} with another body`);
    }
    assert.equal((await walletBalance(frank.key, wallet)).available, '3.00', 'the transfer moved money once');
    const idempotencyKey = randomUUID();
    const closeBody = undefined;
    await move(frank.key, wallet, 'main', '3.00');
    const closed = await call(base(), 'POST', `/v1/wallets/${wallet}/close`, closeBody, { token: frank.key, idempotencyKey });
    assert.equal(closed.status, 200);
    const closedAgain = await call(base(), 'POST', `/v1/wallets/${wallet}/close`, closeBody, { token: frank.key, idempotencyKey });
    assert.deepEqual([closedAgain.status, closedAgain.body], [200, closed.body]);
  });

  it('never takes a wallet below zero under concurrent transfers out of it, and a close racing a transfer in has one outcome', async () => {
    const gina = await signUp(base());
    await fund(base(), gina.key, 'USD', '100.00');
    const wallet = await createWallet(gina.key);
    assert.equal((await move(gina.key, 'main', wallet, '10.00')).status, 201);
    const answers = await Promise.all(Array.from({ length: 30 }, () => move(gina.key, wallet, 'main', '1.00')));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 201).length, 10, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 422).length, 20, JSON.stringify(statuses));
    assert.equal((await walletBalance(gina.key, wallet)).available, '0.00');
    assert.equal((await balances(base(), gina.token)).USD.available, '100.00', 'money conserved');

    for (let round = 0; round < 5; round++) {
      const target = await createWallet(gina.key, `race ${round}`);
      const [sent, closed] = await Promise.all([
        move(gina.key, 'main', target, '1.00'),
        call(base(), 'POST', `/v1/wallets/${target}/close`, undefined, { token: gina.key, idempotencyKey: randomUUID() }),
      ]);
      const held = (await walletBalance(gina.key, target)).available;
      if (sent.status === 201) {
        expectError(closed, 409, 'wallet_not_empty', undefined, 'the transfer landed first: the close is refused');
        assert.equal(held, '1.00');
      } else {
        expectError(sent, 404, 'wallet_not_found', 'to_wallet_id', 'the close came first: the transfer is refused');
        assert.equal(closed.status, 200);
        assert.equal(held, '0.00');
      }
    }
  });
});
