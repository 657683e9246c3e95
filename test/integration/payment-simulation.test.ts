// Sandbox payment simulation against the real stack and the mock rails: a move that ends a payment
// is told to its partner first, and a partner that had already paid wins; settling a payment the
// partner never took is refused.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { createCustomer, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { violations } from '../support/load';
import { fund } from '../support/money';
import { browse, linkCustomer, ownerWithCustomer } from '../support/partner-links';

const PERSON = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'GB', kind: 'personal' };

describe('payments: sandbox simulation with the partner', () => {
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  let customerId: string;
  before(async function () {
    this.timeout(30_000);
    ({ owner, customerId } = await ownerWithCustomer(base(), ['claimless', 'openbank']));
    await fund(base(), owner.key, 'GBP', '100.00');
  });
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const simulate = (id: string, action: string) => call(base(), 'POST', `/v1/sandbox/payments/${id}/${action}`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
  const sendByLink = async (amount: string) => {
    const sent = await call(base(), 'POST', '/v1/payments/send',
      { customer_id: customerId, partner: 'claimless', amount, currency: 'GBP', purpose: 'gift', payee: PERSON }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    return sent.body;
  };
  const gbp = async () => {
    const response = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: owner.token });
    const row = response.body.breakdown.find((b: { currency: string }) => b.currency === 'GBP');
    return [row.available, row.pending];
  };
  const paymentOf = (id: string) => call(base(), 'GET', `/v1/payments/${id}`, undefined, { token: owner.key }).then((r) => r.body);

  for (const action of ['cancel', 'expire-claim']) {
    it(`does not ${action} a payment the payee already claimed: it completes, its hold paid out, and the answer is 409`, async () => {
      const [available] = await gbp();
      const sent = await sendByLink('6.00');
      assert.equal((await browse(sent.claim_link, { decision: 'claim' })).status, 200, 'the payee claims');
      expectError(await simulate(sent.id, action), 409, 'payment_state_conflict', 'action');
      const now = await paymentOf(sent.id);
      assert.deepEqual([now.status, now.failure], ['completed', null], 'the payment shows what the partner did');
      assert.deepEqual(await gbp(), [(Number(available) - 6).toFixed(2), '0.00'], 'the hold was paid out, never released');
    });
  }

  it('fails a claimless payment at the partner too: its link stops working', async () => {
    const [available] = await gbp();
    const sent = await sendByLink('4.00');
    const failed = await simulate(sent.id, 'fail');
    assert.deepEqual([failed.status, failed.body.status, failed.body.failure.code], [200, 'failed', 'simulated_failure']);
    assert.equal((await browse(sent.claim_link)).status, 410, 'the claim link no longer works');
    assert.notEqual((await browse(sent.claim_link, { decision: 'claim' })).status, 200, 'and cannot be claimed');
    assert.deepEqual(await gbp(), [available, '0.00'], 'the hold is back');
  });

  it('refuses to settle a pay-in the partner never took, and credits nothing', async () => {
    const linkId = await linkCustomer(base(), owner.key, (await createCustomer(base(), owner.key)).body.id, 'openbank');
    const customer = (await testService().runtime.db('partner_links').where('id', linkId).first('customer_id')).customer_id;
    const down = await call(base(), 'POST', '/v1/payments/add-funds', { customer_id: customer, partner: 'openbank', amount: '9.00', currency: 'USD' },
      { token: owner.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'unavailable' } });
    assert.equal(down.status, 202, JSON.stringify(down.body));
    // The link is revoked: nothing resubmits the payment, which stays pending until the partner is asked.
    await call(base(), 'DELETE', `/v1/customers/${customer}/partner-links/${linkId}`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    const paymentId = down.body.id;
    assert.equal((await paymentOf(paymentId)).status, 'pending');
    expectError(await simulate(paymentId, 'settle'), 409, 'payment_state_conflict', 'action');
    assert.equal((await paymentOf(paymentId)).status, 'pending');
    assert.deepEqual(await testService().runtime.db('journal_entries').where('payment_id', paymentId), [], 'nothing was credited');
  });
});
