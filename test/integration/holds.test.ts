// Holds (DESIGN.md section 5g): authorize now, capture or void later, where open-source ledgers
// get them wrong: a hold reduces available at once and counts in every later decision, a capture
// takes no more than is left, a hold no longer active takes nothing, and races on one hold (capture
// against void, against expiry, two captures for its last money) have one outcome each, money
// conserved and the journal balanced. The ledger releases expired holds by itself, once, also
// when it was down at expires_at. An increment raises an active hold from the side it holds from,
// once per key, and two racing for the same money are decided one way.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { restartLedger } from '../support/service';
import { Money } from '../../ledger/money';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectCredentialRules, type RouteAccess } from '../support/access';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { balances, fund, payerAndPayee, transfer, transferReaches } from '../support/money';

const base = () => testService().baseUrl;

function hold(key: string, body: Record<string, unknown>, idempotencyKey = randomUUID()) {
  return call(base(), 'POST', '/v1/holds', { currency: 'USD', ...body }, { token: key, idempotencyKey });
}
function capture(key: string, holdId: string, body: Record<string, unknown>, idempotencyKey = randomUUID()) {
  return call(base(), 'POST', `/v1/holds/${holdId}/capture`, body, { token: key, idempotencyKey });
}
function increment(key: string, holdId: string, body: Record<string, unknown>, idempotencyKey = randomUUID()) {
  return call(base(), 'POST', `/v1/holds/${holdId}/increment`, body, { token: key, idempotencyKey });
}
function voidHold(key: string, holdId: string, idempotencyKey = randomUUID()) {
  return call(base(), 'POST', `/v1/holds/${holdId}/void`, undefined, { token: key, idempotencyKey });
}
async function getHold(key: string, holdId: string) {
  const response = await call(base(), 'GET', `/v1/holds/${holdId}`, undefined, { token: key });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body;
}
async function main(key: string, currency = 'USD'): Promise<{ available: string; held: string; pending: string }> {
  const response = await call(base(), 'GET', '/v1/wallets/main/balances', undefined, { token: key });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.balances.find((b: { currency: string }) => b.currency === currency) ?? { available: '0.00', held: '0.00', pending: '0.00' };
}

/** Every journal entry that touched the account's held money sums to zero per currency. */
async function assertJournalBalanced(accountId: string): Promise<void> {
  const { db } = testService().runtime;
  const { rows } = await db.raw(
    `SELECT p.entry_id, p.currency, sum(p.amount)::text AS total FROM postings p
      WHERE p.entry_id IN (SELECT q.entry_id FROM postings q JOIN ledger_accounts la ON la.id = q.ledger_account_id WHERE la.account_id = ? AND la.kind IN ('held', 'wallet_held'))
      GROUP BY p.entry_id, p.currency`, [accountId]);
  assert.ok(rows.length > 0);
  for (const row of rows) assert.ok(new Money(row.total).isZero(), `entry ${row.entry_id} balances in ${row.currency}`);
}

/** What a hold took is captured, released or left, and its status says which. */
function assertConserved(h: { amount: string; captured_amount: string; released_amount: string; status: string }): void {
  const rest = new Money(h.amount).minus(h.captured_amount).minus(h.released_amount);
  assert.ok(!rest.isNegative(), JSON.stringify(h));
  assert.equal(h.status === 'active', !rest.isZero(), JSON.stringify(h));
}

describe('holds', () => {
  let alice: SignedUp;
  let merchant: SignedUp;
  before(async () => {
    [alice, merchant] = await payerAndPayee(base(), 'USD', '100.00');
  });

  it('takes the amount out of available at once, counted by the next transfer, and captures in parts up to what is left', async () => {
    const created = await hold(alice.key, { amount: '40.00', description: 'table 12' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    assert.deepEqual([created.body.status, created.body.amount, created.body.captured_amount, created.body.wallet_id, created.body.captures], ['active', '40.00', '0.00', 'main', []]);
    assert.deepEqual(await main(alice.key), { currency: 'USD', available: '60.00', held: '40.00', pending: '0.00' });
    const totals = (await balances(base(), alice.token)).USD as unknown as Record<string, string>;
    assert.deepEqual([totals.available, totals.held, totals.pending], ['60.00', '40.00', '0.00'], 'the account\'s balance shows the held figure too');
    expectError(await transfer(base(), alice.key, { recipient_email: merchant.email, amount: '60.01', currency: 'USD' }), 422, 'insufficient_funds', 'amount', 'the held money is not spendable');

    const first = await capture(alice.key, id, { amount: '10.00', recipient_email: merchant.email, note: 'starter' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual([first.body.status, first.body.captured_amount, first.body.captures.length], ['active', '10.00', 1]);
    const paid = await call(base(), 'GET', `/v1/transfers/${first.body.captures[0].transfer_id}`, undefined, { token: alice.key });
    assert.deepEqual([paid.body.status, paid.body.type, paid.body.amount, paid.body.recipient.email], ['completed', 'internal', '10.00', merchant.email]);
    assert.equal((await capture(alice.key, id, { amount: '15.00', recipient_email: merchant.email })).status, 200);
    expectError(await capture(alice.key, id, { amount: '15.01', recipient_email: merchant.email }), 422, 'hold_exceeded', 'amount', 'more than is left');
    expectError(await capture(alice.key, id, { amount: '1.00', recipient_email: 'nobody-' + randomUUID() + '@example.com' }), 422, 'recipient_not_found', 'recipient_email');
    const last = await capture(alice.key, id, { amount: '5.00', recipient_email: merchant.email, final: true });
    assert.equal(last.status, 200, JSON.stringify(last.body));
    assert.deepEqual([last.body.status, last.body.captured_amount, last.body.released_amount, last.body.captures.map((c: { amount: string }) => c.amount)],
      ['captured', '30.00', '10.00', ['10.00', '15.00', '5.00']]);
    expectError(await voidHold(alice.key, id), 409, 'hold_not_active', 'hold_id', 'a void after a final capture');
    expectError(await capture(alice.key, id, { amount: '1.00', recipient_email: merchant.email }), 409, 'hold_not_active', 'hold_id');
    assert.deepEqual(await main(alice.key), { currency: 'USD', available: '70.00', held: '0.00', pending: '0.00' });
    assert.equal((await main(merchant.key)).available, '30.00');
    await assertJournalBalanced(alice.account.id);

    const { db } = testService().runtime;
    const types = (await db('account_events').where('account_id', alice.account.id).orderBy('account_seq').select('payload')).map((e) => e.payload)
      .filter((p) => p.resource_id === id).map((p) => p.type);
    assert.deepEqual(types, ['hold.created', 'hold.captured', 'hold.captured', 'hold.captured']);
    const mainEvents = (await db('account_events').where('account_id', alice.account.id).orderBy('account_seq').select('payload')).map((e) => e.payload)
      .filter((p) => p.type === 'balance.updated').map((p) => JSON.parse(p.data.attributes));
    assert.deepEqual(mainEvents[1], { available: '60.00', pending: '0.00', held: '40.00' }, 'the hold\'s balance event names the held figure');
  });

  it('leaves `amount` as it was: the money the account owns is available + held + pending, in the balance and in every balance event', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '100.00');
    assert.equal((await hold(owner.key, { amount: '40.00' })).status, 201);
    const sent = await transfer(base(), owner.key, { recipient_email: alice.email, amount: '5.00', currency: 'USD' });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const totals = (await balances(base(), owner.token)).USD as unknown as Record<string, string>;
    assert.deepEqual([totals.amount, totals.available, totals.held, totals.pending], ['95.00', '55.00', '40.00', '0.00'], 'a hold moved money from available to held; amount counts both');
    const { db } = testService().runtime;
    const events = (await db('account_events').where('account_id', owner.account.id).orderBy('account_seq').select('payload')).map((e) => e.payload)
      .filter((p) => p.type === 'balance.updated').map((p) => ({ amount: p.data.amount, ...JSON.parse(p.data.attributes) }));
    // The faucet's credit, the hold's, then the transfer's: the last one, of a command that has nothing to do with holds, names the held figure too.
    assert.deepEqual(events, [
      { amount: '100.00', available: '100.00', held: '0.00', pending: '0.00' },
      { amount: '100.00', available: '60.00', held: '40.00', pending: '0.00' },
      { amount: '95.00', available: '55.00', held: '40.00', pending: '0.00' },
    ]);
  });

  it('voids what is left, and a voided hold takes no capture; holds on a wallet keep it from closing', async () => {
    const bob = await signUp(base());
    await fund(base(), bob.key, 'USD', '50.00');
    const created = await hold(bob.key, { amount: '20.00' });
    const voided = await voidHold(bob.key, created.body.id);
    assert.equal(voided.status, 200, JSON.stringify(voided.body));
    assert.deepEqual([voided.body.status, voided.body.released_amount], ['voided', '20.00']);
    expectError(await capture(bob.key, created.body.id, { amount: '1.00', recipient_email: merchant.email }), 409, 'hold_not_active', 'hold_id', 'a capture after a void');
    expectError(await voidHold(bob.key, created.body.id), 409, 'hold_not_active');
    assert.deepEqual(await main(bob.key), { currency: 'USD', available: '50.00', held: '0.00', pending: '0.00' });

    const wallet = (await call(base(), 'POST', '/v1/wallets', { name: 'tips' }, { token: bob.key, idempotencyKey: randomUUID() })).body.id;
    await call(base(), 'POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: wallet, amount: '10.00', currency: 'USD' }, { token: bob.key, idempotencyKey: randomUUID() });
    expectError(await hold(bob.key, { amount: '10.01', wallet_id: wallet }), 422, 'insufficient_funds', 'amount');
    const onWallet = await hold(bob.key, { amount: '10.00', wallet_id: wallet });
    assert.equal(onWallet.status, 201, JSON.stringify(onWallet.body));
    assert.equal(onWallet.body.wallet_id, wallet);
    const walletBalances = await call(base(), 'GET', `/v1/wallets/${wallet}/balances`, undefined, { token: bob.key });
    assert.deepEqual(walletBalances.body.balances, [{ currency: 'USD', available: '0.00', held: '10.00', pending: '0.00' }]);
    expectError(await call(base(), 'POST', `/v1/wallets/${wallet}/close`, undefined, { token: bob.key, idempotencyKey: randomUUID() }), 409, 'wallet_not_empty');
    expectError(await hold(alice.key, { amount: '1.00', wallet_id: wallet }), 404, 'wallet_not_found', 'wallet_id', 'another account\'s wallet');
    assert.equal((await capture(bob.key, onWallet.body.id, { amount: '10.00', recipient_email: merchant.email })).body.status, 'captured');
    assert.equal((await call(base(), 'POST', `/v1/wallets/${wallet}/close`, undefined, { token: bob.key, idempotencyKey: randomUUID() })).status, 200);
    await assertJournalBalanced(bob.account.id);
  });

  it('pages the active holds on when the hold a cursor names has left the filter since (voided between two pages)', async () => {
    const carl = await signUp(base());
    await fund(base(), carl.key, 'USD', '50.00');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await hold(carl.key, { amount: '1.00' })).body.id);
    const first = await call(base(), 'GET', '/v1/holds?status=active&limit=2', undefined, { token: carl.key });
    assert.deepEqual(first.body.data.map((h: { id: string }) => h.id), [ids[4], ids[3]]);
    assert.equal(first.body.next_cursor, ids[3]);
    assert.equal((await voidHold(carl.key, ids[3])).status, 200); // the cursor's hold is active no more
    const second = await call(base(), 'GET', `/v1/holds?status=active&limit=2&before=${first.body.next_cursor}`, undefined, { token: carl.key });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.deepEqual(second.body.data.map((h: { id: string }) => h.id), [ids[2], ids[1]], 'the list goes on after the cursor\'s place');
    const third = await call(base(), 'GET', `/v1/holds?status=active&limit=2&before=${second.body.next_cursor}`, undefined, { token: carl.key });
    assert.deepEqual([third.body.data.map((h: { id: string }) => h.id), third.body.has_more], [[ids[0]], false]);
    expectError(await call(base(), 'GET', `/v1/holds?status=active&before=${randomUUID()}`, undefined, { token: carl.key }), 400, 'invalid_request', 'before', 'a cursor that names no hold of the account');
  });

  it('pays a capture to bank details or on the chain as POST /v1/transfers does: executing on the rail, then completed, the recipient paid once', async () => {
    const [payer, payee] = await Promise.all([signUp(base(), { chain_wallet: true }), signUp(base(), { chain_wallet: true })]);
    await Promise.all([fund(base(), payer.key, 'USD', '50.00'), fund(base(), payer.key, 'USDC', '50.000000')]);
    const viban = payee.vibans.find((v) => v.currency === 'USD')! as any;
    const bank = { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency: 'USD' };
    const id = (await hold(payer.key, { amount: '30.00' })).body.id;
    expectError(await capture(payer.key, id, { amount: '1.00', recipient: { email: payee.email, name: 'Payee', bank: { ...bank, currency: 'EUR' } } }), 400, 'invalid_request', 'recipient.bank.currency');
    expectError(await capture(payer.key, id, { amount: '1.00', recipient_email: payee.email, recipient: { email: payee.email, name: 'Payee', bank } }), 400, 'invalid_request', 'recipient');
    const byBank = await capture(payer.key, id, { amount: '20.00', recipient: { email: payee.email, name: 'Payee', bank }, final: true });
    assert.equal(byBank.status, 200, JSON.stringify(byBank.body));
    assert.deepEqual([byBank.body.status, byBank.body.captured_amount, byBank.body.released_amount, byBank.body.captures[0].recipient_email], ['captured', '20.00', '10.00', payee.email]);
    const external = await transferReaches(base(), payer.key, byBank.body.captures[0].transfer_id, 'completed');
    assert.deepEqual([external.type, external.amount, external.recipient.bank.account_number], ['external', '20.00', bank.account_number]);

    const chainHold = (await hold(payer.key, { amount: '12.500000', currency: 'USDC' })).body.id;
    const onChain = await capture(payer.key, chainHold, { amount: '12.500000', recipient_email: payee.email });
    assert.equal(onChain.status, 200, JSON.stringify(onChain.body));
    await transferReaches(base(), payer.key, onChain.body.captures[0].transfer_id, 'completed');

    assert.deepEqual(await main(payer.key), { currency: 'USD', available: '30.00', held: '0.00', pending: '0.00' });
    assert.deepEqual(await main(payer.key, 'USDC'), { currency: 'USDC', available: '37.500000', held: '0.000000', pending: '0.000000' });
    assert.equal((await main(payee.key)).available, '20.00');
    assert.equal((await main(payee.key, 'USDC')).available, '12.500000');
    await assertJournalBalanced(payer.account.id);
  });

  it('never takes available below zero under 50 concurrent holds and transfers on one balance', async () => {
    const carol = await signUp(base());
    await fund(base(), carol.key, 'USD', '100.00');
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0
      ? hold(carol.key, { amount: '7.00' })
      : transfer(base(), carol.key, { recipient_email: merchant.email, amount: '7.00', currency: 'USD' }))));
    const accepted = answers.filter((a) => a.status === 201);
    assert.ok(answers.every((a) => a.status === 201 || (a.status === 422 && a.body.error === 'insufficient_funds')), JSON.stringify(answers.map((a) => a.status)));
    assert.equal(accepted.length, 14, 'every 7.00 that fitted in 100.00 was authorized, and no more');
    const holds = accepted.filter((a) => a.body.captures !== undefined).length;
    assert.deepEqual(await main(carol.key), { currency: 'USD', available: '2.00', held: `${7 * holds}.00`, pending: '0.00' });
  });

  it('decides a capture racing a void, and two captures racing the last of a hold, one way each: money conserved, the journal balanced', async () => {
    const dave = await signUp(base());
    await fund(base(), dave.key, 'USD', '100.00');
    let captured = new Money(0);
    for (let round = 0; round < 5; round++) {
      const id = (await hold(dave.key, { amount: '10.00' })).body.id;
      const [c, v] = await Promise.all([capture(dave.key, id, { amount: '10.00', recipient_email: merchant.email }), voidHold(dave.key, id)]);
      const after = await getHold(dave.key, id);
      assertConserved(after);
      if (c.status === 200) {
        expectError(v, 409, 'hold_not_active', 'hold_id', 'the capture came first');
        assert.deepEqual([after.status, after.captured_amount, after.released_amount], ['captured', '10.00', '0.00']);
        captured = captured.plus(10);
      } else {
        expectError(c, 409, 'hold_not_active', 'hold_id', 'the void came first');
        assert.deepEqual([after.status, after.captured_amount, after.released_amount], ['voided', '0.00', '10.00']);
      }
    }
    for (let round = 0; round < 5; round++) {
      const id = (await hold(dave.key, { amount: '10.00' })).body.id;
      assert.equal((await capture(dave.key, id, { amount: '4.00', recipient_email: merchant.email })).status, 200);
      const both = await Promise.all([1, 2].map(() => capture(dave.key, id, { amount: '6.00', recipient_email: merchant.email })));
      assert.deepEqual(both.map((b) => b.status).sort(), [200, 409], JSON.stringify(both.map((b) => b.body)));
      const after = await getHold(dave.key, id);
      assert.deepEqual([after.status, after.captured_amount, after.captures.length], ['captured', '10.00', 2]);
      captured = captured.plus(10);
    }
    const balance = await main(dave.key);
    assert.deepEqual(balance, { currency: 'USD', available: new Money(100).minus(captured).toFixed(2), held: '0.00', pending: '0.00' });
    await assertJournalBalanced(dave.account.id);
  });

  it('expires a hold at expires_at by itself, racing a capture one way, and once even when the ledger was down at that moment', async () => {
    const erin = await signUp(base());
    await fund(base(), erin.key, 'USD', '100.00');
    const { db } = testService().runtime;
    for (let round = 0; round < 3; round++) {
      const expiresAt = new Date(Date.now() + 1500);
      const id = (await hold(erin.key, { amount: '10.00', expires_at: expiresAt.toISOString() })).body.id;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now() - 30)));
      const c = await capture(erin.key, id, { amount: '10.00', recipient_email: merchant.email });
      const after = await eventually(async () => { const h = await getHold(erin.key, id); return h.status === 'active' ? undefined : h; }, 15_000, 'the hold to end');
      assertConserved(after);
      if (c.status === 200) assert.deepEqual([after.status, after.captured_amount], ['captured', '10.00']);
      else {
        expectError(c, 409, 'hold_not_active', 'hold_id', 'the expiry came first');
        assert.deepEqual([after.status, after.released_amount], ['expired', '10.00']);
      }
    }

    const service = testService();
    const index = service.roles.findIndex((r) => r.role === 'ledger');
    const id = (await hold(erin.key, { amount: '5.00', expires_at: new Date(Date.now() + 1000).toISOString() })).body.id;
    await service.roles[index].stop();
    try {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      assert.equal((await getHold(erin.key, id)).status, 'active', 'nobody released it while the ledger was down');
    } finally {
      service.roles[index] = await restartLedger(service);
    }
    const expired = await eventually(async () => { const h = await getHold(erin.key, id); return h.status === 'expired' ? h : undefined; }, 20_000, 'the expiry after the restart');
    assert.equal(expired.released_amount, '5.00');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // further sweeps find nothing to do
    const releases = await db('account_events').where('account_id', erin.account.id).select('payload');
    assert.equal(releases.filter((e) => e.payload.resource_id === id && e.payload.type === 'hold.released').length, 1, 'released once');
    const { rows } = await db.raw(`SELECT count(*)::int AS n FROM processed_commands WHERE command_id = ?`, [`hold.expire:${id}`]);
    assert.equal(rows[0].n, 1);
    assert.equal((await main(erin.key)).held, '0.00');
    await assertJournalBalanced(erin.account.id);
  });

  it('answers a hold repeated under its key after the hold expired with the hold its first attempt made, and refuses a past expires_at once', async () => {
    const fay = await signUp(base());
    await fund(base(), fay.key, 'USD', '20.00');
    const key = randomUUID();
    const body = { amount: '5.00', expires_at: new Date(Date.now() + 1000).toISOString() };
    const first = await hold(fay.key, body, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    await eventually(async () => ((await getHold(fay.key, first.body.id)).status === 'expired' ? true : undefined), 15_000, 'the hold to expire');
    // As when the first answer never reached the client, nor the cache: the repeat is decided by the ledger's record of the key.
    const { redis } = testService().runtime;
    const prefix = redis.options.keyPrefix ?? '';
    const cachedAnswers = await redis.keys(`${prefix}idem:ledger:*:${key}`);
    assert.equal(cachedAnswers.length, 1, 'the key\'s cached answer');
    for (const cached of cachedAnswers) await redis.del(cached.slice(prefix.length));
    const repeated = await hold(fay.key, body, key);
    assert.ok(repeated.status === 200 || repeated.status === 201, `the repeat answers the hold, not a refusal: ${repeated.status} ${JSON.stringify(repeated.body)}`);
    assert.equal(repeated.body.id, first.body.id);
    const pastKey = randomUUID();
    const past = { amount: '5.00', expires_at: new Date(Date.now() - 1000).toISOString() };
    expectError(await hold(fay.key, past, pastKey), 400, 'invalid_request', 'expires_at');
    expectError(await hold(fay.key, past, pastKey), 400, 'invalid_request', 'expires_at', 'the refusal is the key\'s answer');
    assert.deepEqual(await main(fay.key), { currency: 'USD', available: '20.00', held: '0.00', pending: '0.00' });
  });

  it('answers credentials, scopes and pk_ keys on every route, 400 naming the field, and replays or refuses under one Idempotency-Key', async () => {
    const frank = await signUp(base());
    await fund(base(), frank.key, 'USD', '50.00');
    const id = (await hold(frank.key, { amount: '5.00' })).body.id;
    const routes: RouteAccess[] = [
      ['POST', '/v1/holds', { amount: '1.00', currency: 'USD' }, 'write'], ['GET', '/v1/holds', undefined, 'read'], ['GET', `/v1/holds/${id}`, undefined, 'read'],
      ['POST', `/v1/holds/${id}/capture`, { amount: '1.00', recipient_email: merchant.email }, 'write'], ['POST', `/v1/holds/${id}/void`, undefined, 'write'],
      ['POST', `/v1/holds/${id}/increment`, { amount: '1.00' }, 'write'],
    ];
    await expectCredentialRules(base(), frank, 'holds', 'wallets:write', routes);
    expectError(await call(base(), 'GET', `/v1/holds/${id}`, undefined, { token: merchant.key }), 404, 'hold_not_found', 'hold_id', 'another account\'s hold');
    expectError(await capture(merchant.key, id, { amount: '1.00', recipient_email: frank.email }), 404, 'hold_not_found', 'hold_id');
    expectError(await voidHold(merchant.key, id), 404, 'hold_not_found', 'hold_id');
    expectError(await increment(merchant.key, id, { amount: '1.00' }), 404, 'hold_not_found', 'hold_id');
    const bad: Array<[string, string, unknown, string]> = [
      ['POST', '/v1/holds', { currency: 'USD' }, 'amount'], ['POST', '/v1/holds', { amount: '1.001', currency: 'USD' }, 'amount'],
      ['POST', '/v1/holds', { amount: '1.00', currency: 'USD', expires_at: new Date(Date.now() - 1000).toISOString() }, 'expires_at'],
      ['POST', '/v1/holds', { amount: '1.00', currency: 'USD', expires_at: new Date(Date.now() + 31 * 86_400_000).toISOString() }, 'expires_at'],
      ['POST', '/v1/holds', { amount: '1.00', currency: 'USD', wallet_id: 'pocket' }, 'wallet_id'],
      ['POST', `/v1/holds/${id}/capture`, { amount: '1.00' }, 'recipient_email'], ['POST', `/v1/holds/${id}/capture`, { amount: '1.001', recipient_email: merchant.email }, 'amount'],
      ['POST', `/v1/holds/${id}/capture`, { amount: '1.00', recipient_email: merchant.email, final: 'yes' }, 'final'],
      ['POST', `/v1/holds/${id}/increment`, { amount: '1.001' }, 'amount'],
      ['GET', '/v1/holds/123', undefined, 'hold_id'], ['GET', '/v1/holds?status=gone', undefined, 'status'],
    ];
    for (const [method, path, body, field] of bad) {
      const response = await call(base(), method, path, body, { token: frank.key, idempotencyKey: randomUUID() });
      assert.equal(response.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.details, field, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(response.body)}`);
    }

    // The other request under the key: another body, or (void has none) the void of another hold.
    const other = (await hold(frank.key, { amount: '1.00' })).body.id;
    const writes: Array<[string, unknown, string, unknown]> = [
      ['/v1/holds', { amount: '2.00', currency: 'USD' }, '/v1/holds', { amount: '3.00', currency: 'USD' }],
      [`/v1/holds/${id}/capture`, { amount: '1.00', recipient_email: merchant.email }, `/v1/holds/${id}/capture`, { amount: '2.00', recipient_email: merchant.email }],
      [`/v1/holds/${id}/void`, undefined, `/v1/holds/${other}/void`, undefined],
    ];
    for (const [path, body, otherPath, otherBody] of writes) {
      const idempotencyKey = randomUUID();
      const first = await call(base(), 'POST', path, body, { token: frank.key, idempotencyKey });
      assert.ok(first.status === 201 || first.status === 200, `${path}: ${JSON.stringify(first.body)}`);
      const again = await call(base(), 'POST', path, body, { token: frank.key, idempotencyKey });
      assert.deepEqual([again.status, again.body], [200, first.body], `${path} replayed`);
      expectError(await call(base(), 'POST', otherPath, otherBody, { token: frank.key, idempotencyKey }), 409, 'idempotency_conflict', undefined, `${otherPath} under the key of ${path}`);
    }
    assert.equal((await getHold(frank.key, other)).status, 'active', 'the conflicting void changed nothing');
    const after = await getHold(frank.key, id);
    assert.deepEqual([after.status, after.captured_amount, after.released_amount], ['voided', '1.00', '4.00'], 'each write took effect once');
  });

  it('raises a hold by an increment from available to held, to the cent, and a capture of all of the new amount pays it all', async () => {
    const gus = await signUp(base());
    await fund(base(), gus.key, 'USD', '100.00');
    const merchantBefore = new Money((await main(merchant.key)).available);
    const id = (await hold(gus.key, { amount: '40.00' })).body.id;
    assert.deepEqual(await main(gus.key), { currency: 'USD', available: '60.00', held: '40.00', pending: '0.00' });

    const raised = await increment(gus.key, id, { amount: '12.34' });
    assert.equal(raised.status, 200, JSON.stringify(raised.body));
    assert.deepEqual([raised.body.id, raised.body.status, raised.body.amount, raised.body.captured_amount, raised.body.released_amount], [id, 'active', '52.34', '0.00', '0.00']);
    assert.deepEqual(await main(gus.key), { currency: 'USD', available: '47.66', held: '52.34', pending: '0.00' });
    assert.deepEqual(await getHold(gus.key, id), raised.body, 'the hold as read is the hold answered');

    const part = await capture(gus.key, id, { amount: '2.34', recipient_email: merchant.email });
    assert.deepEqual([part.status, part.body.status, part.body.captured_amount], [200, 'active', '2.34'], JSON.stringify(part.body));
    assert.deepEqual(await main(gus.key), { currency: 'USD', available: '47.66', held: '50.00', pending: '0.00' });
    const again = await increment(gus.key, id, { amount: '0.01' });
    assert.deepEqual([again.status, again.body.amount], [200, '52.35'], JSON.stringify(again.body));
    assert.deepEqual(await main(gus.key), { currency: 'USD', available: '47.65', held: '50.01', pending: '0.00' });
    expectError(await capture(gus.key, id, { amount: '50.02', recipient_email: merchant.email }), 422, 'hold_exceeded', 'amount', 'a cent more than the increments left');
    const all = await capture(gus.key, id, { amount: '50.01', recipient_email: merchant.email });
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual([all.body.status, all.body.amount, all.body.captured_amount, all.body.released_amount], ['captured', '52.35', '52.35', '0.00']);
    assert.deepEqual(await main(gus.key), { currency: 'USD', available: '47.65', held: '0.00', pending: '0.00' });
    assert.equal((await main(merchant.key)).available, merchantBefore.plus('52.35').toFixed(2), 'the recipient paid all the hold held');
    expectError(await increment(gus.key, id, { amount: '1.00' }), 409, 'hold_not_active', 'hold_id', 'an increment of a captured hold');

    const { db } = testService().runtime;
    const payloads = (await db('account_events').where('account_id', gus.account.id).orderBy('account_seq').select('payload')).map((e) => e.payload);
    assert.deepEqual(payloads.filter((p) => p.resource_id === id).map((p) => p.type), ['hold.created', 'hold.captured', 'hold.captured'], 'no event type of its own');
    const moved = payloads.filter((p) => p.type === 'balance.updated').map((p) => { const { available, held } = JSON.parse(p.data.attributes); return [p.data.amount, available, held]; });
    assert.deepEqual(moved, [
      ['100.00', '100.00', '0.00'], ['100.00', '60.00', '40.00'], ['100.00', '47.66', '52.34'], ['97.66', '47.66', '50.00'], ['97.66', '47.65', '50.01'], ['47.65', '47.65', '0.00'],
    ], 'the faucet, the hold, each increment and each capture: a balance.updated each');
    await assertJournalBalanced(gus.account.id);
  });

  it('raises a hold on a wallet from the wallet\'s available, not the main balance\'s, and a void then releases all of the new amount', async () => {
    const hana = await signUp(base());
    await fund(base(), hana.key, 'USD', '100.00');
    const wallet = (await call(base(), 'POST', '/v1/wallets', { name: 'deposits' }, { token: hana.key, idempotencyKey: randomUUID() })).body.id;
    await call(base(), 'POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: wallet, amount: '30.00', currency: 'USD' }, { token: hana.key, idempotencyKey: randomUUID() });
    const onWallet = async () => (await call(base(), 'GET', `/v1/wallets/${wallet}/balances`, undefined, { token: hana.key })).body.balances;
    const id = (await hold(hana.key, { amount: '10.00', wallet_id: wallet })).body.id;
    const raised = await increment(hana.key, id, { amount: '15.00' });
    assert.deepEqual([raised.status, raised.body.amount, raised.body.wallet_id], [200, '25.00', wallet], JSON.stringify(raised.body));
    assert.deepEqual(await onWallet(), [{ currency: 'USD', available: '5.00', held: '25.00', pending: '0.00' }]);
    assert.deepEqual(await main(hana.key), { currency: 'USD', available: '70.00', held: '0.00', pending: '0.00' });
    expectError(await increment(hana.key, id, { amount: '5.01' }), 422, 'insufficient_funds', 'amount', 'the main balance has it, the wallet does not');
    const voided = await voidHold(hana.key, id);
    assert.deepEqual([voided.status, voided.body.status, voided.body.released_amount], [200, 'voided', '25.00'], JSON.stringify(voided.body));
    assert.deepEqual(await onWallet(), [{ currency: 'USD', available: '30.00', held: '0.00', pending: '0.00' }]);
    const postings = (await call(base(), 'GET', `/v1/wallets/${wallet}/ledger-entries?order=asc`, undefined, { token: hana.key })).body.data as Array<{ entry_id: string; kind: string; balance: string; amount: string }>;
    assert.deepEqual(postings.map((p) => [p.kind, p.balance, p.amount]), [
      ['wallet_transfer', 'available', '30.00'],
      ['hold_create', 'available', '-10.00'], ['hold_create', 'held', '10.00'],
      ['hold_increment', 'available', '-15.00'], ['hold_increment', 'held', '15.00'],
      ['hold_release', 'held', '-25.00'], ['hold_release', 'available', '25.00'],
    ], 'the increment is an entry of its own kind, between the hold and its release');
    await assertJournalBalanced(hana.account.id);
  });

  it('refuses an increment of a hold not the caller\'s (404), no longer active (409), beyond what is available (422) or of a bad amount (400 naming it), changing nothing', async () => {
    const ida = await signUp(base());
    await fund(base(), ida.key, 'USD', '50.00');
    const id = (await hold(ida.key, { amount: '20.00' })).body.id;
    const ended = (await hold(ida.key, { amount: '5.00' })).body.id;
    assert.equal((await voidHold(ida.key, ended)).status, 200);
    const state = async () => [await main(ida.key), await getHold(ida.key, id), await getHold(ida.key, ended)];
    const before = await state();
    assert.deepEqual(before[0], { currency: 'USD', available: '30.00', held: '20.00', pending: '0.00' });
    const refusals: Array<[string, () => Promise<JsonResponse>, number, string, string]> = [
      ['another account\'s hold', () => increment(merchant.key, id, { amount: '1.00' }), 404, 'hold_not_found', 'hold_id'],
      ['a hold that never was', () => increment(ida.key, randomUUID(), { amount: '1.00' }), 404, 'hold_not_found', 'hold_id'],
      ['a hold voided', () => increment(ida.key, ended, { amount: '1.00' }), 409, 'hold_not_active', 'hold_id'],
      ['a cent more than available', () => increment(ida.key, id, { amount: '30.01' }), 422, 'insufficient_funds', 'amount'],
      ['no amount', () => increment(ida.key, id, {}), 400, 'invalid_request', 'amount'],
      ['a zero amount', () => increment(ida.key, id, { amount: '0.00' }), 400, 'invalid_request', 'amount'],
      ['a negative amount', () => increment(ida.key, id, { amount: '-1.00' }), 400, 'invalid_request', 'amount'],
      ['an amount past the currency\'s scale', () => increment(ida.key, id, { amount: '1.001' }), 400, 'invalid_request', 'amount'],
      ['an amount as a number', () => increment(ida.key, id, { amount: 1 }), 400, 'invalid_request', 'amount'],
      ['a currency besides the amount', () => increment(ida.key, id, { amount: '1.00', currency: 'EUR' }), 400, 'invalid_request', 'currency'],
    ];
    for (const [what, send, status, code, field] of refusals) {
      expectError(await send(), status, code, field, what);
      assert.deepEqual(await state(), before, `${what} changed nothing`);
    }
  });

  it('increments once under one Idempotency-Key, and of two increments racing for money only one of them fits, makes exactly one', async () => {
    const jo = await signUp(base());
    await fund(base(), jo.key, 'USD', '100.00');
    const id = (await hold(jo.key, { amount: '10.00' })).body.id;
    const key = randomUUID();
    const first = await increment(jo.key, id, { amount: '5.00' }, key);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const again = await increment(jo.key, id, { amount: '5.00' }, key);
    assert.deepEqual([again.status, again.body], [200, first.body], 'the same answer, not a second increment');
    expectError(await increment(jo.key, id, { amount: '6.00' }, key), 409, 'idempotency_conflict', undefined, 'another amount under the key');
    assert.deepEqual([(await getHold(jo.key, id)).amount, await main(jo.key)], ['15.00', { currency: 'USD', available: '85.00', held: '15.00', pending: '0.00' }]);

    // Each round: two increments of more than half of what is available, sent at once.
    let available = new Money('85.00');
    let held = new Money('15.00');
    for (const amount of ['50.00', '20.00', '10.00']) {
      const both = await Promise.all([1, 2].map(() => increment(jo.key, id, { amount })));
      assert.deepEqual(both.map((b) => b.status).sort(), [200, 422], JSON.stringify(both.map((b) => b.body)));
      expectError(both.find((b) => b.status === 422)!, 422, 'insufficient_funds', 'amount');
      available = available.minus(amount);
      held = held.plus(amount);
      const after = await getHold(jo.key, id);
      assert.deepEqual([after.status, after.amount], ['active', held.toFixed(2)]);
      assert.deepEqual(await main(jo.key), { currency: 'USD', available: available.toFixed(2), held: held.toFixed(2), pending: '0.00' });
    }
    await assertJournalBalanced(jo.account.id);
  });
});
