// Transfers sent from a wallet (from_wallet_id, DESIGN.md section 5g), in a batch and alone: the
// money comes out of the wallet's available balance, items from one wallet count together
// against it (an atomic batch never takes it below zero, and changes nothing when it would), a
// payout the partner fails goes back to the wallet, and another account's wallet, a closed one
// or a malformed id is refused as the wallet routes refuse them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { resultCommand } from '../../consumers/partners/dispatcher';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { Money } from '../../ledger/money';
import { derivedUuid, idempotentCommandId } from '../../src/idempotency/derived-ids';
import { TOPICS } from '../../src/kafka/topics';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { fund, transferReaches } from '../support/money';

describe('transfers from a wallet, in a batch and alone', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  let bob: SignedUp;
  let carol: SignedUp;
  before(async () => {
    [bob, carol] = await Promise.all([signUp(base()), signUp(base())]);
  });
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const post = (who: SignedUp, path: string, body?: unknown, idempotencyKey = randomUUID(), headers: Record<string, string> = {}) =>
    call(base(), 'POST', path, body, { token: who.key, idempotencyKey, headers });
  const pay = (email: string, amount: string, fromWalletId?: string) => ({ recipient_email: email, amount, currency: 'USD', ...(fromWalletId ? { from_wallet_id: fromWalletId } : {}) });
  const toBank = (payee: SignedUp, amount: string, fromWalletId: string) => {
    const viban = payee.vibans.find((v) => v.currency === 'USD')!;
    const bank = { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency: 'USD' };
    return { recipient: { email: payee.email, name: 'Payee', bank }, amount, currency: 'USD', from_wallet_id: fromWalletId };
  };
  const balancesOf = async (who: SignedUp, walletId: string) => {
    const response = await call(base(), 'GET', `/v1/wallets/${walletId}/balances`, undefined, { token: who.key });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const { available, held, pending } = response.body.balances.find((b: { currency: string }) => b.currency === 'USD') ?? { available: '0.00', held: '0.00', pending: '0.00' };
    return { available, held, pending };
  };
  const minus = (a: string, b: string) => new Money(a).minus(b).toFixed(2);

  /** An account with `main` on its main balance, `inWallet` of it moved to a new wallet. */
  async function senderWithWallet(main: string, inWallet: string): Promise<{ sender: SignedUp; walletId: string }> {
    const sender = await signUp(base());
    await fund(base(), sender.key, 'USD', main);
    const walletId = (await post(sender, '/v1/wallets', { name: 'payouts' })).body.id;
    const moved = await post(sender, '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: walletId, amount: inWallet, currency: 'USD' });
    assert.equal(moved.status, 201, JSON.stringify(moved.body));
    return { sender, walletId };
  }
  async function transfersOf(who: SignedUp): Promise<Array<{ amount: string; from_wallet_id: string | null }>> {
    const rows = await testService().runtime.db('transfers').where('account_id', who.account.id).orderBy(['created_at', 'command_id']).select('amount', 'from_wallet_id');
    return rows.map((r) => ({ amount: new Money(r.amount).toFixed(2), from_wallet_id: r.from_wallet_id }));
  }
  /** The wallet's balance.updated events, as the account's event stream carries them. */
  async function walletEvents(who: SignedUp, walletId: string): Promise<Array<Record<string, string>>> {
    const rows = await testService().runtime.db('account_events').where('account_id', who.account.id).orderBy('account_seq').select('payload');
    return rows.map((r) => r.payload).filter((p) => p.type === 'balance.updated' && p.data.attributes !== null)
      .map((p) => JSON.parse(p.data.attributes)).filter((a) => a.wallet_id === walletId);
  }
  const latestWalletEvent = (who: SignedUp, walletId: string, available: string) => eventually(async () => {
    const events = await walletEvents(who, walletId);
    return events.some((a) => a.available === available) ? events.at(-1) : undefined;
  }, 10_000, 'the wallet\'s balance event');

  it('atomic: wallet items that together exceed the wallet change nothing, and the answer names the refused item', async () => {
    const { sender, walletId } = await senderWithWallet('100.00', '30.00');
    const [mainBefore, walletBefore] = [await balancesOf(sender, 'main'), await balancesOf(sender, walletId)];
    const response = await post(sender, '/v1/transfer-batches', {
      atomic: true, transfers: [pay(bob.email, '10.00'), pay(bob.email, '20.00', walletId), pay(carol.email, '5.00'), pay(carol.email, '15.00', walletId)],
    });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    assert.deepEqual(response.body.items.map((i: any) => [i.status, i.error?.error ?? null, i.error?.details ?? null]), [
      ['not_created', null, null], ['not_created', null, null], ['not_created', null, null], ['refused', 'insufficient_funds', 'transfers[3].amount'],
    ], '20.00 and 15.00 from a wallet of 30.00: the second is refused, though the main balance would cover it');
    assert.equal(response.body.status, 'failed');
    assert.deepEqual([await balancesOf(sender, 'main'), await balancesOf(sender, walletId)], [mainBefore, walletBefore]);
    assert.deepEqual(await transfersOf(sender), []);

    const fits = await post(sender, '/v1/transfer-batches', { atomic: true, transfers: [pay(bob.email, '10.00'), pay(bob.email, '20.00', walletId), pay(carol.email, '10.00', walletId)] });
    assert.equal(fits.body.status, 'completed', JSON.stringify(fits.body));
    assert.deepEqual(await balancesOf(sender, walletId), { available: '0.00', held: '0.00', pending: '0.00' });
    assert.equal((await balancesOf(sender, 'main')).available, minus(mainBefore.available, '10.00'), 'the main balance paid its own item only');
    assert.deepEqual((await transfersOf(sender)).map((t) => t.from_wallet_id).sort(), [null, walletId, walletId].sort());
    assert.deepEqual(await latestWalletEvent(sender, walletId, '0.00'), { wallet_id: walletId, available: '0.00', held: '0.00', pending: '0.00' });
  });

  it('not atomic: exactly the items the wallet covers, in order, and the main balance pays its own', async () => {
    const { sender, walletId } = await senderWithWallet('50.00', '30.00');
    const response = await post(sender, '/v1/transfer-batches', {
      atomic: false, transfers: [pay(bob.email, '10.00', walletId), pay(bob.email, '25.00', walletId), pay(carol.email, '5.00'), pay(carol.email, '20.00', walletId), pay(bob.email, '0.01', walletId)],
    });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    assert.deepEqual(response.body.items.map((i: any) => [i.status, i.error?.error ?? null, i.error?.details ?? null]), [
      ['created', null, null], ['refused', 'insufficient_funds', 'transfers[1].amount'], ['created', null, null], ['created', null, null], ['refused', 'insufficient_funds', 'transfers[4].amount'],
    ]);
    assert.equal(response.body.status, 'partial');
    assert.deepEqual(await balancesOf(sender, walletId), { available: '0.00', held: '0.00', pending: '0.00' });
    assert.equal((await balancesOf(sender, 'main')).available, '15.00', '50.00 - 30.00 into the wallet - 5.00');
    assert.deepEqual(await transfersOf(sender), [{ amount: '10.00', from_wallet_id: walletId }, { amount: '5.00', from_wallet_id: null }, { amount: '20.00', from_wallet_id: walletId }]);
  });

  it('a bank payout from a wallet that the partner declines returns to the wallet, the main balance as it was', async () => {
    const payee = await signUp(base());
    const { sender, walletId } = await senderWithWallet('60.00', '40.00');
    const mainBefore = await balancesOf(sender, 'main');
    // The item's transfer is claimed first, so the dispatcher leaves it alone and the decline sent here is its only answer.
    const key = randomUUID();
    const transferId = derivedUuid('transfer-batch-item', idempotentCommandId(sender.account.id, key), '0');
    await testService().runtime.db('partner_instructions').insert({ transfer_id: transferId, attempt: 0, source: 'lost', claimed_at: new Date() });
    const response = await post(sender, '/v1/transfer-batches', { atomic: true, transfers: [toBank(payee, '12.00', walletId)] }, key);
    assert.equal(response.status, 201, JSON.stringify(response.body));
    assert.deepEqual([response.body.status, response.body.items[0].transfer_id], ['completed', transferId]);
    assert.deepEqual(await balancesOf(sender, walletId), { available: '28.00', held: '0.00', pending: '0.00' });
    assert.deepEqual(await balancesOf(sender, 'main'), { ...mainBefore, pending: '12.00' }, 'the payout waits in the main balance\'s pending');

    const { runtime } = testService();
    const decline: LedgerCommandEnvelope = resultCommand(sender.account.id, { transfer_id: transferId, outcome: 'failed', partner_payment_id: null, failure_code: 'partner_declined', failure_message: null });
    await runtime.producer.send({
      topic: runtime.names.full(TOPICS.ledgerCommands), acks: -1,
      messages: [{ key: decline.account_id, value: await runtime.codec.encode(TOPICS.ledgerCommands, decline) }],
    });
    assert.equal((await transferReaches(base(), sender.key, transferId, 'failed')).failure.code, 'partner_declined');
    assert.deepEqual(await balancesOf(sender, walletId), { available: '40.00', held: '0.00', pending: '0.00' }, 'the 12.00 is back where it came from');
    assert.deepEqual(await balancesOf(sender, 'main'), mainBefore);
    assert.deepEqual(await latestWalletEvent(sender, walletId, '40.00'), { wallet_id: walletId, available: '40.00', held: '0.00', pending: '0.00' });
  });

  it('POST /v1/transfers from a wallet: Sandbox-Scenario decline fails it at the rail, and the amount returns to the wallet', async () => {
    const payee = await signUp(base());
    const { sender, walletId } = await senderWithWallet('30.00', '20.00');
    const mainBefore = await balancesOf(sender, 'main');
    const sent = await post(sender, '/v1/transfers', toBank(payee, '15.00', walletId), randomUUID(), { 'Sandbox-Scenario': 'decline' });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.equal((await transferReaches(base(), sender.key, sent.body.transfer_id, 'failed')).failure.code, 'partner_declined');
    assert.deepEqual(await balancesOf(sender, walletId), { available: '20.00', held: '0.00', pending: '0.00' });
    assert.deepEqual(await balancesOf(sender, 'main'), mainBefore);

    const paid = await post(sender, '/v1/transfers', pay(bob.email, '20.00', walletId));
    assert.deepEqual([paid.status, paid.body.status], [201, 'completed'], JSON.stringify(paid.body));
    assert.deepEqual(await balancesOf(sender, walletId), { available: '0.00', held: '0.00', pending: '0.00' });
    expectError(await post(sender, '/v1/transfers', pay(bob.email, '0.01', walletId)), 422, 'insufficient_funds', 'amount', 'the wallet is empty, the main balance is not');
    const main = await post(sender, '/v1/transfers', pay(bob.email, '0.01', 'main'));
    assert.deepEqual([main.status, (await balancesOf(sender, 'main')).available], [201, minus(mainBefore.available, '0.01')], '"main" names the main balance');
  });

  it('refuses another account\'s wallet and a closed one as the wallet routes do, and answers 400 for a malformed id', async () => {
    const { sender, walletId } = await senderWithWallet('20.00', '10.00');
    const { walletId: bobsWallet } = await senderWithWallet('5.00', '5.00');
    const emptied = (await post(sender, '/v1/wallets', { name: 'closed' })).body.id;
    assert.equal((await post(sender, `/v1/wallets/${emptied}/close`)).status, 200);
    const response = await post(sender, '/v1/transfer-batches', {
      atomic: false, transfers: [pay(bob.email, '1.00', bobsWallet), pay(bob.email, '1.00', emptied), pay(bob.email, '1.00', randomUUID()), pay(bob.email, '1.00', walletId)],
    });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    assert.deepEqual(response.body.items.map((i: any) => [i.status, i.error?.error ?? null, i.error?.details ?? null]), [
      ['refused', 'wallet_not_found', 'transfers[0].from_wallet_id'], ['refused', 'wallet_not_found', 'transfers[1].from_wallet_id'],
      ['refused', 'wallet_not_found', 'transfers[2].from_wallet_id'], ['created', null, null],
    ]);
    assert.equal((await balancesOf(sender, walletId)).available, '9.00');

    for (const malformed of ['MAIN', 'wallet-1', walletId.toUpperCase(), 7]) {
      expectError(await post(sender, '/v1/transfer-batches', { atomic: true, transfers: [pay(bob.email, '1.00'), { ...pay(bob.email, '1.00'), from_wallet_id: malformed }] }),
        400, 'invalid_request', 'transfers[1].from_wallet_id', String(malformed));
      expectError(await post(sender, '/v1/transfers', { ...pay(bob.email, '1.00'), from_wallet_id: malformed }), 400, 'invalid_request', 'from_wallet_id', String(malformed));
    }
    expectError(await post(sender, '/v1/transfers', pay(bob.email, '1.00', bobsWallet)), 404, 'wallet_not_found', 'from_wallet_id', 'another account\'s wallet');
    expectError(await post(sender, '/v1/transfers', pay(bob.email, '1.00', emptied)), 404, 'wallet_not_found', 'from_wallet_id', 'a closed wallet');
    assert.deepEqual([(await balancesOf(sender, walletId)).available, (await transfersOf(sender)).length], ['9.00', 1]);
  });
});
