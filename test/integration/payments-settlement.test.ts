// Settlement of open payments by the settler (DESIGN.md section 5c), against the real mock rails:
// a partner that is down delays only its own payments; an unreachable partner is answered 202
// with the pending payment, which the service resubmits with the whole instruction; a revoked
// link's payouts still end, their holds released; and payments that never change (unclaimed
// claim links) do not keep another payment from being settled.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { partnerAccess } from '../../src/partner-links/access';
import { railsUrl, testService } from '../hooks';
import { createCustomer, signUp, type SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { fund } from '../support/money';
import { linkCustomer } from '../support/partner-links';
import { controlHeaders } from '../support/secrets';

const PERSON = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'GB', kind: 'personal' };
const BANK = { iso_country_code: 'DE', bank_name: 'Bank', currency_code: 'EUR', bank_account_number: 'DE89370400440532013000' };

/** How soon an add-funds is credited however other partners and payments fare. */
const SETTLES_WITHIN_MS = 18_000;

describe('payments: settlement', () => {
  const base = () => testService().baseUrl;
  let owner: SignedUp;

  /** A customer of the owner, linked with the partners. */
  const linkedCustomer = async (...partners: string[]) => {
    const customerId = (await createCustomer(base(), owner.key)).body.id;
    const links: Record<string, string> = {};
    for (const partner of partners) links[partner] = await linkCustomer(base(), owner.key, customerId, partner);
    return { customerId, links };
  };
  const send = (customerId: string, body: Record<string, unknown>, scenario?: string) => call(base(), 'POST', '/v1/payments/send',
    { customer_id: customerId, partner: 'claimless', amount: '1.00', currency: 'GBP', purpose: 'invoice 7', payee: PERSON, ...body },
    { token: owner.key, idempotencyKey: randomUUID(), headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
  const addFunds = (customerId: string) => call(base(), 'POST', '/v1/payments/add-funds',
    { customer_id: customerId, partner: 'openbank', amount: '5.00', currency: 'USD' }, { token: owner.key, idempotencyKey: randomUUID() });
  const paymentOf = (id: string) => call(base(), 'GET', `/v1/payments/${id}`, undefined, { token: owner.key }).then((r) => r.body);
  const reaches = (id: string, statuses: string[], withinMs: number, what: string) => eventually(async () => {
    const now = await paymentOf(id);
    return statuses.includes(now.status) ? now : undefined;
  }, withinMs, what);
  const breakdown = async (currency: string) => {
    const response = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: owner.token });
    const row = response.body.breakdown.find((b: { currency: string }) => b.currency === currency);
    return row ? [row.available, row.pending] : ['0', '0'];
  };
  const partnerDown = (partner: string, seconds: number) => call(`${railsUrl()}/${partner}`, 'POST', `/_control/down?seconds=${seconds}`, undefined, { headers: controlHeaders() });

  before(async function () {
    this.timeout(30_000);
    owner = await signUp(base());
    for (const [currency, amount] of [['EUR', '1000.00'], ['GBP', '1000.00']]) await fund(base(), owner.key, currency, amount);
  });
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  it('settles an add-funds promptly while another partner is down', async function () {
    this.timeout(90_000);
    const { customerId } = await linkedCustomer('claimless', 'openbank');
    for (let i = 0; i < 3; i += 1) assert.equal((await send(customerId, {})).status, 201, 'claim links the settler follows');
    assert.equal((await partnerDown('claimless', 60)).status, 200);
    try {
      const added = await addFunds(customerId);
      assert.equal(added.status, 201, JSON.stringify(added.body));
      assert.equal(added.body.status, 'authorized');
      const started = Date.now();
      // Well inside the 60 s claimless hangs, and inside the 25 s one hanging call's retries took
      // when the settler went through payments one by one; the margin is for a loaded machine
      // (the whole suite shares this service's settler).
      await reaches(added.body.id, ['completed'], SETTLES_WITHIN_MS, 'openbank settles the add-funds while claimless hangs');
      assert.ok(Date.now() - started < SETTLES_WITHIN_MS);
    } finally {
      await partnerDown('claimless', 0);
    }
  });

  it('answers a partner it cannot reach with 202 and the pending payment, held, and resubmits it with the payee', async function () {
    this.timeout(60_000);
    const { customerId } = await linkedCustomer('fiat');
    const [availableBefore] = await breakdown('EUR');
    const sent = await send(customerId, { partner: 'fiat', amount: '40.00', currency: 'EUR', purpose: 'rent, May', payee: { ...PERSON, bank: BANK } }, 'unavailable');
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.deepEqual([sent.body.status, sent.body.amount, sent.body.purpose, sent.body.payee, sent.body.external_id], ['pending', '40.00', 'rent, May', { ...PERSON, bank: BANK }, null]);
    assert.ok(sent.headers.get('retry-after'), 'says when to look again');
    assert.match(sent.body.source_funding_method_external_id, /^fm_fiat_/);
    assert.deepEqual(await breakdown('EUR'), [(Number(availableBefore) - 40).toFixed(2), '40.00'], 'held meanwhile');

    const paid = await reaches(sent.body.id, ['completed'], 30_000, 'the service resubmits it on its own, and it is paid');
    assert.equal(paid.retry_count, 5, 'the request\'s five submissions, each answered 503, and the service\'s one: five after the first');
    assert.deepEqual(await breakdown('EUR'), [(Number(availableBefore) - 40).toFixed(2), '0.00'], 'paid once');
    const { config, runtime } = testService();
    const atPartner = await partnerAccess(config, runtime.db, railsUrl(), () => base()).clients('fiat').getPayment(paid.external_id);
    assert.deepEqual(atPartner.beneficiary, { ...PERSON, bank: BANK }, 'the resubmission carried the payee');
    assert.deepEqual(atPartner.metadata, { payment_id: paid.id, funding_method: paid.source_funding_method_external_id, purpose: 'rent, May' });
  });

  it('ends the open payouts of a revoked link and releases their holds', async function () {
    this.timeout(60_000);
    const { customerId, links } = await linkedCustomer('claimless');
    const before = await breakdown('GBP');
    const claim = await send(customerId, { amount: '10.00' });
    assert.deepEqual([claim.status, claim.body.status], [201, 'sent']);
    const unsent = await send(customerId, { amount: '7.00' }, 'unavailable');
    const revoked = await call(base(), 'DELETE', `/v1/customers/${customerId}/partner-links/${links.claimless}`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    // The payee lets the claim link expire: the partner ends the payment it made.
    assert.equal((await call(`${railsUrl()}/claimless`, 'POST', `/_control/expire-claim/${claim.body.external_id}`, undefined, { headers: controlHeaders() })).status, 200);

    const cancelled = await reaches(claim.body.id, ['cancelled', 'failed'], 10_000, 'the expired claim link is seen without the customer\'s link');
    assert.deepEqual([cancelled.status, cancelled.failure.code], ['cancelled', 'claim_expired']);
    assert.deepEqual([unsent.status, unsent.body.status], [202, 'pending'], JSON.stringify(unsent.body));
    const failed = await reaches(unsent.body.id, ['failed'], 30_000, 'the payment never made is failed once the partner says it has none');
    assert.equal(failed.failure.code, 'partner_link_revoked');
    assert.deepEqual(await breakdown('GBP'), before, 'both holds released');
  });

  it('credits an add-funds promptly behind 150 unclaimed claim links (more than a settler round takes) @system', async function () {
    this.timeout(180_000);
    const { customerId } = await linkedCustomer('claimless', 'openbank');
    const ids: string[] = [];
    for (let batch = 0; batch < 15; batch += 1) {
      const sent = await Promise.all(Array.from({ length: 10 }, () => send(customerId, {})));
      for (const s of sent) {
        assert.deepEqual([s.status, s.body.status], [201, 'sent'], JSON.stringify(s.body));
        ids.push(s.body.id);
      }
    }
    const added = await addFunds(customerId);
    assert.deepEqual([added.status, added.body.status], [201, 'authorized'], JSON.stringify(added.body));
    await reaches(added.body.id, ['completed'], SETTLES_WITHIN_MS, 'the add-funds is polled and credited though 150 older open payments never change');
    // The claim links expire, and the settler cancels every one: none was left unpolled.
    await Promise.all(ids.map(async (id) => call(`${railsUrl()}/claimless`, 'POST', `/_control/expire-claim/${(await paymentOf(id)).external_id}`, undefined, { headers: controlHeaders() })));
    await eventually(async () => {
      const open = await testService().runtime.db('payments').whereIn('id', ids).where('status', 'sent').count<{ count: string }[]>('* as count');
      return open[0].count === '0' ? true : undefined;
    }, 30_000, 'every expired claim link is cancelled');
  });
});
