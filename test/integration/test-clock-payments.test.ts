// Payments on a test clock (DESIGN.md sections 5c and 5i) against the running service: a claimless
// payout's link expires on the clock, exactly when the claim TTL has passed on it, and the advance
// tells the partner, which cancels the payment and releases its hold at that instant; a link the
// payee claimed first is paid, never cancelled; a payment pending past its deadline on the clock is
// failed when the partner holds none, and recorded as the partner holds it otherwise, each at its
// own instant of one advance; an account on the wall with the same payout is untouched.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { db, testService } from '../hooks';
import type { SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { fund } from '../support/money';
import { browse, ownerWithCustomer } from '../support/partner-links';

const base = () => testService().baseUrl;
const DAY_MS = 86_400_000;
const PERSON = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'GB', kind: 'personal' };
/** A clock far from the wall (a year after this run's own time), so nothing of the wall's could be mistaken for it. */
const clockStart = () => new Date(Math.floor(Date.now() / 1000) * 1000 + 365 * DAY_MS);
const iso = (ms: number) => new Date(ms).toISOString();
/** The claim TTL the partner keeps a link open for, and a payment's pending deadline: the service's settings. */
const claimTtlMs = () => testService().config.mockRailsClaimTtlMs;
const pendingDeadlineMs = () => testService().config.paymentPendingDeadlineMs;

async function newClock(at: Date): Promise<string> {
  const made = await call(base(), 'POST', '/v1/sandbox/test-clocks', { frozen_time: at.toISOString() });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body.id;
}

/** Advances the clock and waits until it is ready at `to`. */
async function advanced(token: string, clockId: string, to: number): Promise<void> {
  const answer = await call(base(), 'POST', `/v1/sandbox/test-clocks/${clockId}/advance`, { frozen_time: iso(to) }, { token });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const done = await eventually(async () => {
    const { body } = await call(base(), 'GET', `/v1/sandbox/test-clocks/${clockId}`, undefined, { token });
    return body.status === 'ready' ? body : undefined;
  }, 60_000, `test clock ${clockId} ready`);
  assert.equal(done.frozen_time, iso(to));
}

interface Payer { owner: SignedUp; customerId: string }

/** An account linked with claimless for a customer of its own, with 100.00 GBP; on the clock when one is named. */
async function payer(clockId?: string): Promise<Payer> {
  const linked = await ownerWithCustomer(base(), ['claimless'], clockId ? { test_clock_id: clockId } : {});
  await fund(base(), linked.owner.key, 'GBP', '100.00');
  return linked;
}

const send = (from: Payer, amount: string, scenario?: string) => call(base(), 'POST', '/v1/payments/send',
  { customer_id: from.customerId, partner: 'claimless', amount, currency: 'GBP', purpose: 'gift', payee: PERSON },
  { token: from.owner.key, idempotencyKey: randomUUID(), headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
const paymentOf = async (from: Payer, id: string) => (await call(base(), 'GET', `/v1/payments/${id}`, undefined, { token: from.owner.key })).body;
/** [available, pending] in GBP. */
async function gbp(from: Payer): Promise<string[]> {
  const { body } = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: from.owner.token });
  const row = body.breakdown.find((b: { currency: string }) => b.currency === 'GBP');
  return [row.available, row.pending];
}
/** The payment's events of a type, in its account's sequence. */
async function paymentEvents(accountId: string, paymentId: string, type: string): Promise<any[]> {
  const rows = await db()('account_events').where('account_id', accountId).orderBy('account_seq').select('payload');
  return rows.map((r: { payload: any }) => r.payload).filter((e: any) => e.type === type && e.resource_id === paymentId);
}
const entryKinds = async (paymentId: string) => (await db()('journal_entries').where('payment_id', paymentId).select('kind')).map((e: { kind: string }) => e.kind).sort();

describe('test clocks: payments', function () {
  this.timeout(120_000);
  afterEach(async () => assert.deepEqual(await violations(db()), {}, 'the ledger invariants hold'));

  it('expires an unclaimed claim link at its instant on the clock: cancelled, claim_expired, the hold back to the cent; the wall\'s payout untouched', async () => {
    const start = clockStart();
    const clockId = await newClock(start);
    const erin = await payer(clockId);
    const wall = await payer();
    const sent = await send(erin, '25.00');
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.deepEqual([sent.body.status, sent.body.created_at], ['sent', start.toISOString()], 'made at the clock\'s time');
    const onWall = await send(wall, '25.00');
    assert.equal(onWall.body.status, 'sent', JSON.stringify(onWall.body));
    const expiresAt = start.getTime() + claimTtlMs();

    await advanced(erin.owner.key, clockId, expiresAt - 1000);
    assert.equal((await paymentOf(erin, sent.body.id)).status, 'sent');
    assert.deepEqual(await gbp(erin), ['75.00', '25.00'], 'still held a second before');
    assert.equal((await browse(sent.body.claim_link)).status, 200, 'the link still opens');

    await advanced(erin.owner.key, clockId, expiresAt + DAY_MS);
    const cancelled = await paymentOf(erin, sent.body.id);
    assert.deepEqual([cancelled.status, cancelled.failure.code], ['cancelled', 'claim_expired']);
    assert.deepEqual(await gbp(erin), ['100.00', '0.00'], 'the hold is back, to the cent');
    assert.deepEqual(await entryKinds(sent.body.id), ['payment_hold', 'payment_release']);
    const [failed] = await paymentEvents(erin.owner.account.id, sent.body.id, 'payment.failed');
    assert.equal(failed.created_at, iso(expiresAt), 'told at the clock\'s instant of the expiry, not the advance\'s target');
    assert.equal((await browse(sent.body.claim_link)).status, 410, 'the partner expired the link');

    // The wall's payout: the advance finished (the clock is ready) without touching it.
    assert.equal((await paymentOf(wall, onWall.body.id)).status, 'sent');
    assert.deepEqual(await gbp(wall), ['75.00', '25.00']);
    assert.equal((await browse(onWall.body.claim_link)).status, 200);
  });

  it('pays a link the payee claimed before the advance passed its expiry: completed at the partner\'s word, never cancelled', async () => {
    const start = clockStart();
    const clockId = await newClock(start);
    const fay = await payer(clockId);
    const sent = await send(fay, '30.00');
    assert.equal(sent.body.status, 'sent', JSON.stringify(sent.body));
    // The settler is kept away from it, so the advance is the one to learn of the claim (its partner's 409).
    await db()('payments').where('id', sent.body.id).update({ next_poll_at: new Date(start.getTime() + 10 * 365 * DAY_MS) });
    assert.equal((await browse(sent.body.claim_link, { decision: 'claim' })).status, 200);
    const expiresAt = start.getTime() + claimTtlMs();

    await advanced(fay.owner.key, clockId, expiresAt + 1000);
    const paid = await paymentOf(fay, sent.body.id);
    assert.equal(paid.status, 'completed', JSON.stringify(paid));
    assert.deepEqual(await gbp(fay), ['70.00', '0.00'], 'paid out once, never released');
    assert.deepEqual(await entryKinds(sent.body.id), ['payment_hold', 'payment_settle']);
    const [completed] = await paymentEvents(fay.owner.account.id, sent.body.id, 'payment.completed');
    assert.equal(completed.created_at, iso(expiresAt), 'recorded by the advance, at the instant it would have expired');
    assert.deepEqual(await paymentEvents(fay.owner.account.id, sent.body.id, 'payment.failed'), []);
  });

  it('passes a pending payment\'s deadline on the clock: failed when the partner holds none, recorded as the partner holds it otherwise, each at its instant', async () => {
    const start = clockStart();
    const clockId = await newClock(start);
    const gus = await payer(clockId);
    // The partner never takes the first (unavailable); it makes the second but its answer is lost.
    const never = await send(gus, '10.00', 'unavailable');
    assert.deepEqual([never.status, never.body.status], [202, 'pending'], JSON.stringify(never.body));
    const lost = await send(gus, '20.00', 'lost_answer');
    assert.equal(lost.status, 502, JSON.stringify(lost.body));
    const lostId = (await db()('payments').where('account_id', gus.owner.account.id).where('amount', '20.00').first('id')).id as string;
    assert.equal((await paymentOf(gus, lostId)).status, 'pending');
    assert.deepEqual(await gbp(gus), ['70.00', '30.00']);
    const deadline = start.getTime() + pendingDeadlineMs();

    await advanced(gus.owner.key, clockId, deadline - 1000);
    assert.deepEqual([(await paymentOf(gus, never.body.id)).status, (await paymentOf(gus, lostId)).status], ['pending', 'pending'], 'not a second early');

    // One advance past the deadline and past the claim TTL after it: the lost one is found sent at
    // the deadline, and its link expires a TTL later, in that order.
    await advanced(gus.owner.key, clockId, deadline + claimTtlMs() + DAY_MS);
    const failed = await paymentOf(gus, never.body.id);
    assert.deepEqual([failed.status, failed.failure.code, failed.external_id], ['failed', 'partner_timeout', null]);
    const [failedEvent] = await paymentEvents(gus.owner.account.id, never.body.id, 'payment.failed');
    assert.equal(failedEvent.created_at, iso(deadline));

    const found = await paymentOf(gus, lostId);
    assert.deepEqual([found.status, found.failure?.code], ['cancelled', 'claim_expired'], JSON.stringify(found));
    assert.ok(found.external_id, 'the partner\'s payment was adopted');
    const [sentEvent] = await paymentEvents(gus.owner.account.id, lostId, 'payment.sent');
    const [expiredEvent] = await paymentEvents(gus.owner.account.id, lostId, 'payment.failed');
    assert.equal(sentEvent.created_at, iso(deadline), 'found at the deadline');
    assert.equal(expiredEvent.created_at, iso(deadline + claimTtlMs()), 'expired a claim TTL after the partner\'s payment was known');
    assert.deepEqual(await gbp(gus), ['100.00', '0.00'], 'both holds released, to the cent');
  });
});
