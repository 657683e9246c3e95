// Transfers to a bank account in another currency (DESIGN.md section 5b): the transfer passes
// through quoting, where its price is fixed and recorded; the sender is held the amount in its
// own currency; the rail pays out the converted amount; settlement converts through the FX desk.
// A transfer the rail refuses gives the sender the whole amount back, and the desk never moves.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money, type Currency } from '../../ledger/money';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { violations } from '../support/load';
import { balances, fund, transfer, transferReaches } from '../support/money';

describe('cross-currency transfers', () => {
  const base = () => testService().baseUrl;
  let bob: SignedUp;
  before(async () => { bob = await signUp(base()); });
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const bankOf = (who: SignedUp, currency: string) => {
    const viban = who.vibans.find((v) => v.currency === currency)!;
    return { email: who.email, name: 'Bob', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency } };
  };
  /** Postings on the FX desk's accounts for a transfer. */
  const deskPostings = async (transferId: string) => (await testService().runtime.db('postings as p')
    .join('ledger_accounts as la', 'la.id', 'p.ledger_account_id')
    .where('p.transfer_id', transferId).where('la.code', 'like', 'sys:fx:%').select('la.code', 'p.amount'));

  it('quotes, holds the amount, pays out the conversion and settles through the FX desk', async () => {
    const dave = await signUp(base());
    await fund(base(), dave.key, 'USD', '100.00');
    const bobBefore = (await balances(base(), bob.token)).EUR.available;
    const response = await transfer(base(), dave.key, { recipient: bankOf(bob, 'EUR'), amount: '40.00', currency: 'USD' });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    const { payout, fx } = response.body;
    assert.deepEqual([response.body.amount, response.body.currency, payout.currency, fx.spread], ['40.00', 'USD', 'EUR', '0.0025']);
    assert.equal(payout.amount, new Money('40').times(fx.rate).decimalPlaces(2, Money.ROUND_DOWN).toFixed(2), 'the payout is the amount at the rate, rounded down');
    assert.ok(new Money(fx.rate).isLessThan(fx.mid_rate));
    // Held in the sender's currency: available at once; pending until the rail settles, which can already have happened.
    const held = await balances(base(), dave.token);
    assert.equal(held.USD.available, '60.00');
    assert.ok(['40.00', '0.00'].includes(held.USD.pending), held.USD.pending);

    const done = await transferReaches(base(), dave.key, response.body.transfer_id, 'completed');
    assert.deepEqual(done.status_history.map((h: { from: string | null; to: string }) => [h.from, h.to]),
      [[null, 'pending'], ['pending', 'quoting'], ['quoting', 'executing'], ['executing', 'completed']]);
    assert.deepEqual([done.payout, done.fx], [payout, fx], 'the record keeps the price it was quoted');
    assert.deepEqual(await balances(base(), dave.token).then((b) => [b.USD.available, b.USD.pending]), ['60.00', '0.00']);
    assert.equal((await balances(base(), bob.token)).EUR.available, new Money(bobBefore).plus(payout.amount).toFixed(2), 'the recipient receives the payout');
    const desk = await deskPostings(response.body.transfer_id);
    assert.equal(desk.find((p) => p.code === 'sys:fx:position:USD')?.amount, '40.000000', 'the desk takes the dollars');
    const entries = await testService().runtime.db('journal_entries').where('transfer_id', response.body.transfer_id).orderBy('created_at').pluck('kind');
    assert.deepEqual(entries, ['transfer_hold', 'transfer_settle'], 'the amount was held, then settled');
    assert.ok(desk.some((p) => p.code === 'sys:fx:position:EUR' && new Money(p.amount).isNegative()), 'and pays out the euros');

    const listed = await call(base(), 'GET', `/v1/transfers?limit=1`, undefined, { token: dave.key });
    assert.deepEqual([listed.body.data[0].payout, listed.body.data[0].fx], [payout, fx]);
  });

  it('gives the sender the whole amount back when the rail declines the payout, and the desk never moves', async () => {
    const erin = await signUp(base());
    await fund(base(), erin.key, 'GBP', '100.00');
    const response = await call(base(), 'POST', '/v1/transfers', { recipient: bankOf(bob, 'EUR'), amount: '10.00', currency: 'GBP' },
      { token: erin.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'decline' } });
    assert.equal(response.status, 201, JSON.stringify(response.body));
    const failed = await transferReaches(base(), erin.key, response.body.transfer_id, 'failed');
    assert.ok(failed.failure?.code);
    assert.deepEqual(await balances(base(), erin.token).then((b) => [b.GBP.available, b.GBP.pending]), ['100.00', '0.00']);
    assert.deepEqual(await deskPostings(response.body.transfer_id), []);
  });

  it('refuses a pair the sandbox does not convert, and an amount too small to buy anything, moving nothing', async () => {
    const frank = await signUp(base());
    await fund(base(), frank.key, 'USD', '5.00');
    const usdc = { ...bankOf(bob, 'USD'), bank: { ...bankOf(bob, 'USD').bank, currency: 'USDC' } };
    expectError(await transfer(base(), frank.key, { recipient: usdc, amount: '1.00', currency: 'USD' }), 400, 'unsupported_pair', 'recipient.bank.currency');
    expectError(await transfer(base(), frank.key, { recipient: bankOf(bob, 'GBP'), amount: '0.01', currency: 'USD' }), 400, 'invalid_request', 'amount');
    assert.deepEqual(await balances(base(), frank.token).then((b) => [b.USD.available, b.USD.pending]), ['5.00', '0.00']);
  });

  it('pays every pair out exactly, in the bank account\'s currency', async () => {
    const grace = await signUp(base());
    const pairs: Array<[Currency, Currency]> = [['USD', 'GBP'], ['EUR', 'USD'], ['GBP', 'EUR'], ['EUR', 'GBP']];
    for (const [from, to] of pairs) {
      await fund(base(), grace.key, from, '25.00');
      const response = await transfer(base(), grace.key, { recipient: bankOf(bob, to), amount: '25.00', currency: from });
      assert.equal(response.status, 201, `${from}→${to}: ${JSON.stringify(response.body)}`);
      assert.equal(response.body.payout.currency, to);
      await transferReaches(base(), grace.key, response.body.transfer_id, 'completed');
    }
  });
});
