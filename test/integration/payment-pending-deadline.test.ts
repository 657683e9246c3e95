// A payment's pending deadline against a partner outage longer than it (README "Payments";
// consumers/partners/settler.ts), on the real mock rails. The service's partners role runs here
// with a pending deadline of a few seconds (its own config, restarted for this file and put back
// after), and the partner stays down until the settler has resubmitted the payout twice past it. A
// payout the partner could not take is
// answered 202 pending and held; past the deadline, while the partner cannot be reached, it stays
// pending and held; once the partner is back it is resubmitted and paid, never failed: the
// deadline fails a payment only when a reachable partner confirms it holds none. Nor does time a
// submitter that went away kept its lease count against it (found by the simulation, seed 14).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startPartnerDispatcher } from '../../consumers/partners/runner';
import { railsUrl, testService } from '../hooks';
import { type SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { fund } from '../support/money';
import { ownerWithCustomer } from '../support/partner-links';
import { controlHeaders } from '../support/secrets';
import { takeSubmission } from '../../src/partners/submission-lease';

const PENDING_DEADLINE_MS = 3_000;
/** Longer than the test: the partner comes back when the test says so. */
const OUTAGE_MS = 600_000;
const PERSON = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'GB', kind: 'personal' };
const BANK = { iso_country_code: 'DE', bank_name: 'Bank', currency_code: 'EUR', bank_account_number: 'DE89370400440532013000' };

describe('the pending deadline of a payment, against a partner outage longer than it', function () {
  this.timeout(120_000);
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  let customerId: string;

  /** Replaces the running partners role by one started with `config` changes. */
  async function restartPartners(changes: Partial<ReturnType<typeof testService>['config']>): Promise<void> {
    const service = testService();
    const index = service.roles.findIndex((r) => r.role === 'partners');
    await service.roles[index].stop();
    service.roles[index] = await startPartnerDispatcher({ ...service.runtime, config: { ...service.config, ...changes } }, { railsUrl: railsUrl() });
  }

  before(async () => {
    ({ owner, customerId } = await ownerWithCustomer(base(), ['fiat']));
    await fund(base(), owner.key, 'EUR', '100.00');
    await restartPartners({ paymentPendingDeadlineMs: PENDING_DEADLINE_MS });
  });
  after(async () => {
    await fetch(`${railsUrl()}/fiat/_control/outage?ms=0`, { method: 'POST', headers: controlHeaders() });
    await restartPartners({});
  });
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const breakdown = async () => {
    const response = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: owner.token });
    const row = response.body.breakdown.find((b: { currency: string }) => b.currency === 'EUR');
    return [row.available, row.pending];
  };
  const paymentOf = async (id: string) => (await call(base(), 'GET', `/v1/payments/${id}`, undefined, { token: owner.key })).body;

  it('keeps a payout pending and held while its partner is down past the deadline, and pays it once the partner is back', async () => {
    // The request's own submissions meet a 503 (the sandbox scenario), then the partner goes down for longer than the deadline.
    const sent = await call(base(), 'POST', '/v1/payments/send',
      { customer_id: customerId, partner: 'fiat', amount: '40.00', currency: 'EUR', purpose: 'invoice 8', payee: { ...PERSON, bank: BANK } },
      { token: owner.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'unavailable' } });
    assert.deepEqual([sent.status, sent.body.status], [202, 'pending'], JSON.stringify(sent.body));
    const down = await fetch(`${railsUrl()}/fiat/_control/outage?ms=${OUTAGE_MS}`, { method: 'POST', headers: controlHeaders() });
    assert.equal(down.status, 200);
    const id = sent.body.id;
    const requestSubmissions = (await paymentOf(id)).retry_count;
    assert.deepEqual(await breakdown(), ['60.00', '40.00'], 'held');

    // Down past the deadline (the settler takes it over PAYMENT_RESUBMIT_AFTER_MS after it was
    // recorded, after the deadline): pending and held through two resubmissions of the settler's.
    const seen = await eventually(async () => {
      const now = await paymentOf(id);
      const held = await breakdown();
      const broken = now.status !== 'pending' || held.join() !== '60.00,40.00';
      return broken || now.retry_count >= requestSubmissions + 2 ? { now, held } : undefined;
    }, 60_000, 'two resubmissions by the settler while the partner is down');
    assert.equal(seen.now.status, 'pending', `still pending while the partner is down: ${JSON.stringify(seen.now)}`);
    assert.deepEqual(seen.held, ['60.00', '40.00'], 'still held while the partner is down');
    assert.ok(Date.now() - Date.parse(sent.body.created_at) > PENDING_DEADLINE_MS, 'past the deadline');
    assert.equal((await fetch(`${railsUrl()}/fiat/_control/outage?ms=0`, { method: 'POST', headers: controlHeaders() })).status, 200);

    const done = await eventually(async () => {
      const now = await paymentOf(id);
      return now.status === 'completed' || now.status === 'failed' ? now : undefined;
    }, 40_000, 'resubmitted and paid once the partner is back');
    assert.equal(done.status, 'completed', `paid, never failed: ${JSON.stringify(done)}`);
    assert.ok(done.external_id, 'the partner made it');
    assert.ok(done.retry_count >= requestSubmissions + 2, `the settler resubmitted it (retry_count ${done.retry_count})`);
    assert.deepEqual(await breakdown(), ['60.00', '0.00'], 'the hold ended with the payment, paid out once');
    const entries = await testService().runtime.db('journal_entries').where('payment_id', id);
    assert.deepEqual(entries.map((e: { kind: string }) => e.kind).sort(), ['payment_hold', 'payment_settle'], 'held, then settled; never released');
  });
  it('gives a payment whose submitter went away holding its lease a whole deadline once the lease runs out: resubmitted and paid, not failed', async () => {
    // The request's own submissions meet a 503 (the sandbox scenario); then a submitter takes the
    // payment's lease for longer than the deadline and goes away without giving it back, as a
    // process killed during its partner call does.
    const sent = await call(base(), 'POST', '/v1/payments/send',
      { customer_id: customerId, partner: 'fiat', amount: '10.00', currency: 'EUR', purpose: 'invoice 9', payee: { ...PERSON, bank: BANK } },
      { token: owner.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'unavailable' } });
    assert.deepEqual([sent.status, sent.body.status], [202, 'pending'], JSON.stringify(sent.body));
    const id = sent.body.id;
    // The lease outlasts the settler's window (4 s) and the deadline counted from the request's
    // 503s (3 s): a settler that counted the lease's time against the payment would fail it.
    const leaseMs = Math.max(testService().config.paymentResubmitAfterMs, PENDING_DEADLINE_MS) + 2_000;
    assert.ok(await takeSubmission(testService().runtime.db, id, leaseMs), 'the lease was free to take');

    const done = await eventually(async () => {
      const now = await paymentOf(id);
      return now.status === 'pending' ? undefined : now;
    }, leaseMs + 30_000, 'the payment ends once the lease has run out');
    assert.deepEqual([done.status, done.failure], ['completed', null], `resubmitted and paid, not failed: ${JSON.stringify(done)}`);
    assert.ok(Date.now() - Date.parse(sent.body.created_at) >= leaseMs, 'not before the lease ran out');
    const [rail] = await testService().runtime.db('mock_rails.payments').where({ partner: 'fiat', reference: id }).select('amount', 'status');
    assert.equal(rail?.amount, '10.00', 'the partner made it once');
  });
});
