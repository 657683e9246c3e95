// Transfer batches (DESIGN.md section 5g): many transfers in one request and one ledger command.
// Atomic: every transfer or none, the refused items named; not atomic: exactly the good items;
// two batches racing on one balance never take it below zero; each transfer with its events;
// replay and conflict under one Idempotency-Key; 400 naming the item's field; scopes and pk_.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money } from '../../ledger/money';
import { testService } from '../hooks';
import { signUp, uniqueEmail, type SignedUp } from '../support/accounts';
import { expectCredentialRules, type RouteAccess } from '../support/access';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { balances, fund } from '../support/money';

const base = () => testService().baseUrl;

function batch(key: string, body: Record<string, unknown>, idempotencyKey = randomUUID()) {
  return call(base(), 'POST', '/v1/transfer-batches', body, { token: key, idempotencyKey });
}
const pay = (email: string, amount: string, extra: Record<string, unknown> = {}) => ({ recipient_email: email, amount, currency: 'USD', ...extra });
const available = async (who: SignedUp) => (await balances(base(), who.token)).USD?.available ?? '0.00';
async function transferCount(who: SignedUp): Promise<number> {
  const { rows } = await testService().runtime.db.raw('SELECT count(*)::int AS n FROM transfers WHERE account_id = ?', [who.account.id]);
  return rows[0].n;
}
async function eventTypes(accountId: string, transferId: string): Promise<string[]> {
  const events = await testService().runtime.db('account_events').where('account_id', accountId).orderBy('account_seq').select('payload');
  return events.map((e) => e.payload).filter((p) => p.resource_id === transferId).map((p) => p.type);
}

describe('transfer batches', () => {
  let alice: SignedUp;
  let bob: SignedUp;
  let carol: SignedUp;
  before(async () => {
    [alice, bob, carol] = await Promise.all([signUp(base()), signUp(base()), signUp(base())]);
  });

  it('atomic: one refused item changes nothing, the answer names it and why, and GET reads the batch again', async () => {
    const sender = await signUp(base());
    await fund(base(), sender.key, 'USD', '100.00');
    const before = [await available(bob), await available(carol)];
    const response = await batch(sender.key, { atomic: true, transfers: [pay(bob.email, '10.00'), pay(uniqueEmail('nobody'), '1.00'), pay(carol.email, '20.00'), pay(bob.email, '80.00')] });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    const body = response.body;
    assert.deepEqual([body.atomic, body.status], [true, 'failed']);
    assert.deepEqual(body.items.map((i: any) => [i.index, i.status, i.transfer_id]), [[0, 'not_created', null], [1, 'refused', null], [2, 'not_created', null], [3, 'refused', null]]);
    assert.deepEqual(body.items[1].error, { success: false, error: 'recipient_not_found', message: body.items[1].error.message, details: 'transfers[1].recipient_email' });
    assert.deepEqual([body.items[3].error.error, body.items[3].error.details], ['insufficient_funds', 'transfers[3].amount'], 'the items before it count against the balance');
    assert.equal(body.items[0].error, null);
    assert.equal(await available(sender), '100.00');
    assert.deepEqual([await available(bob), await available(carol)], before);
    assert.equal(await transferCount(sender), 0);
    const again = await call(base(), 'GET', `/v1/transfer-batches/${body.id}`, undefined, { token: sender.key });
    assert.deepEqual([again.status, again.body], [200, body]);

    // The same batch without the bad items: every transfer, in one transaction.
    const good = await batch(sender.key, { atomic: true, transfers: [pay(bob.email, '10.00'), pay(carol.email, '20.00')] });
    assert.equal(good.status, 201, JSON.stringify(good.body));
    assert.deepEqual([good.body.status, good.body.items.map((i: any) => i.status)], ['completed', ['created', 'created']]);
    assert.equal(await available(sender), '70.00');
    assert.equal(await transferCount(sender), 2);
    const first = await call(base(), 'GET', `/v1/transfers/${good.body.items[0].transfer_id}`, undefined, { token: sender.key });
    assert.deepEqual([first.body.status, first.body.amount, first.body.recipient.email], ['completed', '10.00', bob.email]);
    assert.deepEqual(await eventTypes(sender.account.id, good.body.items[0].transfer_id), ['transfer.pending', 'transfer.executing', 'transfer.completed'], 'each transfer has its events');
  });

  it('refuses a batch too large for one message to the ledger, 400 naming transfers, every time, and the commands beside it go through', async function () {
    this.timeout(60_000);
    const sender = await signUp(base());
    await fund(base(), sender.key, 'USD', '20.00');
    const note = 'n'.repeat(500);
    // Long, valid addresses: with 500-character notes, 1,000 items weigh about 0.9 MB.
    const far = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.example.com`;
    const items = (count: number, to = bob.email) => Array.from({ length: count }, () => ({ recipient_email: to, amount: '0.01', currency: 'USD', note }));
    const key = randomUUID();
    const [big, beside] = await Promise.all([
      call(base(), 'POST', '/v1/transfer-batches', { atomic: false, transfers: items(1000, far) }, { token: sender.key, idempotencyKey: key }),
      call(base(), 'POST', '/v1/transfers', { recipient_email: bob.email, amount: '1.00', currency: 'USD' }, { token: sender.key, idempotencyKey: randomUUID() }),
    ]);
    expectError(big, 400, 'invalid_request', 'transfers');
    assert.match(big.body.message, /too large for one message/);
    assert.equal(beside.status, 201, JSON.stringify(beside.body));
    expectError(await call(base(), 'POST', '/v1/transfer-batches', { atomic: false, transfers: items(1000, far) }, { token: sender.key, idempotencyKey: key }), 400, 'invalid_request', 'transfers');
    // Long notes in a batch that fits: decided as any batch.
    const fits = await call(base(), 'POST', '/v1/transfer-batches', { atomic: true, transfers: items(200) }, { token: sender.key, idempotencyKey: randomUUID() });
    assert.equal(fits.status, 201, JSON.stringify(fits.body).slice(0, 300));
    assert.equal(fits.body.status, 'completed');
    assert.equal((await balances(base(), sender.token)).USD.available, '17.00');
  });

  it('not atomic: exactly the good items are applied, each decided alone in order', async () => {
    const sender = await signUp(base());
    await fund(base(), sender.key, 'USD', '30.00');
    const bobBefore = new Money(await available(bob));
    const response = await batch(sender.key, {
      atomic: false, transfers: [pay(bob.email, '10.00'), pay(bob.email, '25.00'), pay(uniqueEmail('nobody'), '1.00'), pay(bob.email, '20.00'), pay(sender.email, '1.00')],
    });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    const { items, status } = response.body;
    assert.equal(status, 'partial');
    assert.deepEqual(items.map((i: any) => [i.status, i.error?.error ?? null, i.error?.details ?? null]), [
      ['created', null, null], ['refused', 'insufficient_funds', 'transfers[1].amount'], ['refused', 'recipient_not_found', 'transfers[2].recipient_email'],
      ['created', null, null], ['refused', 'invalid_request', 'transfers[4].recipient_email'],
    ]);
    assert.equal(await available(sender), '0.00');
    assert.equal(await available(bob), bobBefore.plus(30).toFixed(2));
    assert.equal(await transferCount(sender), 2);
    for (const item of [items[0], items[3]]) {
      assert.deepEqual(await eventTypes(sender.account.id, item.transfer_id), ['transfer.pending', 'transfer.executing', 'transfer.completed']);
    }
  });

  it('two batches racing on one balance never take it below zero', async () => {
    const sender = await signUp(base());
    await fund(base(), sender.key, 'USD', '100.00');
    const six = Array.from({ length: 6 }, () => pay(bob.email, '10.00'));
    const [a, b] = await Promise.all([batch(sender.key, { atomic: true, transfers: six }), batch(sender.key, { atomic: true, transfers: six })]);
    assert.deepEqual([a.status, b.status], [201, 201], JSON.stringify([a.body, b.body]));
    assert.deepEqual([a.body.status, b.body.status].sort(), ['completed', 'failed'], 'one batch of 60.00 fits in 100.00, not two');
    assert.equal(await available(sender), '40.00');

    const ten = Array.from({ length: 10 }, () => pay(carol.email, '3.00'));
    const answers = await Promise.all([batch(sender.key, { atomic: false, transfers: ten }), batch(sender.key, { atomic: false, transfers: ten })]);
    const created = answers.flatMap((r) => r.body.items).filter((i: any) => i.status === 'created').length;
    assert.equal(created, 13, 'exactly the transfers 40.00 covers');
    assert.equal(await available(sender), '1.00');
    const { rows } = await testService().runtime.db.raw(
      `SELECT min(balance_after)::text AS lowest FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id WHERE la.account_id = ? AND la.kind = 'available'`, [sender.account.id]);
    assert.ok(!new Money(rows[0].lowest).isNegative(), `the balance never went below zero (lowest ${rows[0].lowest})`);
  });

  it('replays the same batch under its key, and refuses another body under it (409)', async () => {
    const sender = await signUp(base());
    await fund(base(), sender.key, 'USD', '20.00');
    const idempotencyKey = randomUUID();
    const body = { atomic: false, transfers: [pay(bob.email, '5.00'), pay(carol.email, '5.00')] };
    const first = await batch(sender.key, body, idempotencyKey);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const again = await batch(sender.key, body, idempotencyKey);
    assert.deepEqual([again.status, again.body], [200, first.body]);
    expectError(await batch(sender.key, { ...body, atomic: true }, idempotencyKey), 409, 'idempotency_conflict');
    assert.equal(await available(sender), '10.00', 'the batch moved its money once');
    assert.equal(await transferCount(sender), 2);
  });

  it('answers 400 naming the item\'s field, and refuses other accounts, missing scopes and pk_ keys', async () => {
    const sender = await signUp(base());
    await fund(base(), sender.key, 'USD', '10.00');
    const good = pay(bob.email, '1.00');
    const bad: Array<[unknown, string]> = [
      [{ transfers: [good] }, 'atomic'], [{ atomic: 'yes', transfers: [good] }, 'atomic'], [{ atomic: true }, 'transfers'], [{ atomic: true, transfers: [] }, 'transfers'],
      [{ atomic: true, transfers: Array.from({ length: 1001 }, () => good) }, 'transfers'],
      [{ atomic: true, transfers: [good, good, good, pay(bob.email, '1.001')] }, 'transfers[3].amount'],
      [{ atomic: true, transfers: [good, pay(bob.email, '1.00', { currency: 'XYZ' })] }, 'transfers[1].currency'],
      [{ atomic: true, transfers: [good, { amount: '1.00', currency: 'USD' }] }, 'transfers[1].recipient_email'],
      [{ atomic: true, transfers: [pay(bob.email, '1.00', { recipient: { email: bob.email, name: 'Bob', bank: { country: 'GB', bank_name: 'B', account_number: 'GB00000000', currency: 'GBP' } } })] }, 'transfers[0].recipient'],
      [{ atomic: true, transfers: [pay(bob.email, '1.00', { account_id: sender.account.id })] }, 'transfers[0].account_id'],
      [{ atomic: true, transfers: [{ ...good, amount: 1 }] }, 'transfers[0].amount'],
    ];
    for (const [body, field] of bad) {
      const response = await batch(sender.key, body as Record<string, unknown>);
      assert.equal(response.status, 400, `${JSON.stringify(body).slice(0, 200)}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.details, field, `${JSON.stringify(body).slice(0, 200)}: ${JSON.stringify(response.body)}`);
    }
    assert.equal(await transferCount(sender), 0);

    const id = (await batch(sender.key, { atomic: true, transfers: [good] })).body.id;
    expectError(await call(base(), 'GET', `/v1/transfer-batches/${id}`, undefined, { token: alice.key }), 403, 'cross_account_access_denied');
    expectError(await call(base(), 'GET', `/v1/transfer-batches/${randomUUID()}`, undefined, { token: sender.key }), 404, 'resource_not_found', 'id');
    expectError(await call(base(), 'GET', '/v1/transfer-batches/123', undefined, { token: sender.key }), 400, 'invalid_request', 'id');
    const routes: RouteAccess[] = [['POST', '/v1/transfer-batches', { atomic: true, transfers: [good] }, 'write'], ['GET', `/v1/transfer-batches/${id}`, undefined, 'read']];
    await expectCredentialRules(base(), sender, 'transfers', 'wallets:write', routes);
    assert.equal(await available(sender), '9.00');
  });
});
