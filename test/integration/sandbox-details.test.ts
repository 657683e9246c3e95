// Details a client reads every day, against the real stack and the mock rails: balance totals
// that add up as shown, a payment's hold shown with the payment's state, retry_count counting
// every submission, the faucet's bounds, and a named funding method's currency.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { createCustomer, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { balances, fund } from '../support/money';
import { linkCustomer } from '../support/partner-links';
import { startService, type TestService } from '../support/service';

const PERSON = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'GB', kind: 'personal' };

describe('sandbox details', () => {
  const base = () => testService().baseUrl;
  const faucet = (owner: SignedUp, currency: string, amount: string) =>
    call(base(), 'POST', '/v1/sandbox/faucet', { currency, amount }, { token: owner.key, idempotencyKey: randomUUID() });

  describe('with a chain payment held', () => {
    // A service of its own whose chain confirms a minute after submission, not 150 ms: the
    // payment stays sent by construction, not by winning a race (a slowed machine lost it).
    let service: TestService;
    const base = () => service.baseUrl;
    let owner: SignedUp;
    after(() => service?.stop());
    before(async function () {
      this.timeout(60_000);
      service = await startService({ CHAIN_CONFIRM_MS: '60000' });
      owner = await signUp(base(), { chain_wallet: true });
      const customer = (await createCustomer(base(), owner.key)).body.id;
      const linkId = await linkCustomer(base(), owner.key, customer, 'chain');
      await fund(base(), owner.key, 'USD', '10.00');
      await fund(base(), owner.key, 'USDC', '0.010000');
      const sent = await call(base(), 'POST', '/v1/payments/send',
        { customer_id: customer, partner: 'chain', amount: '0.005000', currency: 'USDC', purpose: 'tip', payee: PERSON }, { token: owner.key, idempotencyKey: randomUUID() });
      assert.deepEqual([sent.status, sent.body.status], [201, 'sent'], JSON.stringify(sent.body));
      // Revoked at once, before the chain confirms: nobody can follow the payment, which stays sent, its amount held.
      await call(base(), 'DELETE', `/v1/customers/${customer}/partner-links/${linkId}`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    });

    it('shows balance totals that add up as shown', async () => {
      const usd = (await balances(base(), owner.token)).USD;
      assert.deepEqual([usd.amount, usd.available, usd.pending], ['10.01', '10.00', '0.01'], 'available 10.005 and pending 0.005 shown so that they add up');
    });

    it('shows a payment\'s hold with the payment\'s state, not completed', async () => {
      const transactions = await call(base(), 'GET', '/v1/transactions?limit=10', undefined, { token: owner.key });
      const hold = transactions.body.data.find((t: { type: string }) => t.type === 'payment_hold');
      assert.ok(hold, JSON.stringify(transactions.body));
      assert.equal(hold.status, 'sent', 'the hold of a payment not paid out yet is not completed');
      assert.equal((await call(base(), 'GET', `/v1/transactions/${hold.id}`, undefined, { token: owner.key })).body.status, 'sent');
    });
  });

  it('counts in retry_count the submissions of a request whose partner stayed unavailable (answered 202 pending)', async function () {
    this.timeout(30_000);
    const owner = await signUp(base());
    const customer = (await createCustomer(base(), owner.key)).body.id;
    await linkCustomer(base(), owner.key, customer, 'openbank');
    const down = await call(base(), 'POST', '/v1/payments/add-funds', { customer_id: customer, partner: 'openbank', amount: '5.00', currency: 'USD' },
      { token: owner.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'unavailable' } });
    assert.equal(down.status, 202, JSON.stringify(down.body));
    const payment = (await call(base(), 'GET', `/v1/payments/${down.body.id}`, undefined, { token: owner.key })).body;
    assert.deepEqual([payment.status, payment.retry_count], ['pending', 4], 'five submissions, each answered 503: four resubmissions');
  });

  // A new account's first faucet credit, refused: the rule, the credit, and the field named.
  const refusedCredits: Array<[behaviour: string, currency: string, amount: string, code: string, field: string]> = [
    ['refuses a faucet credit above the bound of one credit', 'USD', '1000000.01', 'faucet_limit_exceeded', 'amount'],
    ['credits no stablecoin to an account without a chain wallet', 'USDC', '5.000000', 'account_no_chain_wallet', 'currency'],
  ];
  for (const [behaviour, currency, amount, code, field] of refusedCredits) {
    it(behaviour, async () => {
      const owner = await signUp(base());
      expectError(await faucet(owner, currency, amount), 422, code, field);
      assert.equal((await balances(base(), owner.token)).USD.amount, '0.00', 'nothing was credited');
    });
  }

  it('refuses faucet credits beyond the bound of a day, per currency', async function () {
    this.timeout(60_000);
    const owner = await signUp(base());
    for (let i = 0; i < 10; i++) assert.equal((await faucet(owner, 'USD', '1000000.00')).status, 201);
    expectError(await faucet(owner, 'USD', '0.01'), 422, 'faucet_limit_exceeded', 'amount');
    assert.equal((await balances(base(), owner.token)).USD.available, '10000000.00', 'nothing more was credited');
    assert.equal((await faucet(owner, 'EUR', '5.00')).status, 201, 'another currency has its own bound');
  });


  it('refuses a named funding method in another currency than the payment\'s, naming the field', async function () {
    this.timeout(30_000);
    const owner = await signUp(base());
    const customer = (await createCustomer(base(), owner.key)).body.id;
    await linkCustomer(base(), owner.key, customer, 'openbank');
    const methods = await call(base(), 'GET', `/v1/customers/${customer}/funding-methods?partner=openbank`, undefined, { token: owner.key });
    const eur = methods.body.data.find((m: { currency: string }) => m.currency === 'EUR').external_id;
    const before = await testService().runtime.db('payments').where('customer_id', customer).count<{ count: string }[]>('* as count');
    expectError(await call(base(), 'POST', '/v1/payments/add-funds',
      { customer_id: customer, partner: 'openbank', amount: '5.00', currency: 'USD', source_funding_method_external_id: eur }, { token: owner.key, idempotencyKey: randomUUID() }),
    400, 'invalid_currency', 'source_funding_method_external_id');
    assert.deepEqual(await testService().runtime.db('payments').where('customer_id', customer).count<{ count: string }[]>('* as count'), before, 'no payment was made');
  });
});
