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
import { startService, type TestService } from '../support/service';

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

describe('payments: sandbox settle asks the partner', function () {
  this.timeout(60_000);
  // The rail settles pay-ins a minute after submission, not 150 ms: the button comes first.
  let service: TestService;
  let owner: SignedUp;
  let customerId: string;
  before(async () => {
    service = await startService({ CHAIN_CONFIRM_MS: '60000' });
    ({ owner, customerId } = await ownerWithCustomer(service.baseUrl, ['openbank']));
  });
  after(() => service?.stop());

  const addFunds = async (amount: string, scenario?: string) => {
    const answer = await call(service.baseUrl, 'POST', '/v1/payments/add-funds', { customer_id: customerId, partner: 'openbank', amount, currency: 'USD' },
      { token: owner.key, idempotencyKey: randomUUID(), headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
    assert.ok([201, 202].includes(answer.status), JSON.stringify(answer.body));
    return answer.body as { id: string; status: string; external_id: string | null };
  };
  const settle = (id: string) => call(service.baseUrl, 'POST', `/v1/sandbox/payments/${id}/settle`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
  const atRail = async (id: string) => {
    const { external_id: externalId } = await service.runtime.db('payments').where('id', id).first('external_id');
    return service.runtime.db('mock_rails.payments').where('id', externalId).first('status', 'due_status', 'settled_at');
  };
  const credited = async (id: string) => (await service.runtime.db('journal_entries').where('payment_id', id)).length;

  it('settles a pay-in at the partner first: completed there, with the day its statement lists it, and credited here', async () => {
    const payment = await addFunds('12.00');
    const settled = await settle(payment.id);
    assert.deepEqual([settled.status, settled.body.status], [200, 'completed'], JSON.stringify(settled.body));
    const rail = await atRail(payment.id);
    assert.deepEqual([rail.status, rail.due_status], ['completed', null], 'settled at the partner, nothing more due');
    assert.ok(rail.settled_at instanceof Date, 'with a settlement time: the statement lists it');
    assert.ok(await credited(payment.id) > 0, 'the ledger credited it');
  });

  it('refuses to settle a pay-in the partner will reverse (409), and credits nothing', async () => {
    const payment = await addFunds('13.00', 'reverse');
    expectError(await settle(payment.id), 409, 'payment_state_conflict', 'action');
    const rail = await atRail(payment.id);
    assert.deepEqual([rail.status, rail.due_status], ['pending', 'reversed'], 'still on its way to being reversed at the partner');
    const now = (await call(service.baseUrl, 'GET', `/v1/payments/${payment.id}`, undefined, { token: owner.key })).body;
    assert.notEqual(now.status, 'completed');
    assert.equal(await credited(payment.id), 0, 'nothing was credited');
  });
});
