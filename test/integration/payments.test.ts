// Add funds through a linked partner (SPEC.md sections 2 to 4, Payments; DESIGN.md section 5c):
// the payment is authorized on the request, settles later at the partner, and only then does
// the ledger credit the account, once. Then the refusals, each before anything moves.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { railsUrl, testService } from '../hooks';
import { createCustomer, createKey, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { balances } from '../support/money';
import { linkCustomer, ownerWithCustomer } from '../support/partner-links';
import { PaymentSettler } from '../../consumers/partners/settler';
import { partnerAccess } from '../../src/partner-links/access';
import { openEventStream } from '../support/sse';

describe('payments: add funds', () => {
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  let customerId: string;
  before(async () => {
    ({ owner, customerId } = await ownerWithCustomer(base(), ['openbank']));
  });
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const addFunds = (body: Record<string, unknown>, options: { key?: string; idempotencyKey?: string; scenario?: string } = {}) =>
    call(base(), 'POST', '/v1/payments/add-funds', { customer_id: customerId, partner: 'openbank', amount: '25.00', currency: 'USD', ...body },
      { token: options.key ?? owner.key, idempotencyKey: options.idempotencyKey ?? randomUUID(), headers: options.scenario ? { 'Sandbox-Scenario': options.scenario } : {} });
  const payment = (id: string) => call(base(), 'GET', `/v1/payments/${id}`, undefined, { token: owner.key });
  /**
   * Adds `amount` through openbank and waits until it completes. The settler's rounds for a partner
   * run one after another, each sending its commands before the next begins, and the ledger takes
   * an account's commands in order: whatever a round before the one that completes this payment
   * said about the account's other payments is decided by then.
   */
  const settledAfter = async (amount: string) => {
    const created = await addFunds({ amount });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // Its partner id recorded, it is due at once, even if a settler round took it while it was
    // still pending and left it to the request for PAYMENT_RESUBMIT_AFTER_MS.
    const { next_poll_at: due } = await testService().runtime.db('payments').where('id', created.body.id).first('next_poll_at');
    assert.ok(due.getTime() < Date.now() + testService().config.paymentResubmitAfterMs / 2, `next poll at ${due.toISOString()}`);
    await eventually(async () => ((await payment(created.body.id)).body.status === 'completed' ? true : undefined), 18_000, 'the later payment settles');
  };

  it('is authorized on the request, completes later, and only then credits the account, once', async () => {
    const stream = await openEventStream(base(), owner.token);
    try {
      const key = randomUUID();
      const created = await addFunds({}, { idempotencyKey: key });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const p = created.body;
      assert.deepEqual([p.partner, p.direction, p.kind, p.amount, p.currency, p.status, p.idempotency_key, p.retry_count, p.customer_id, p.completed_at, p.claim_link, p.failure],
        ['openbank', 'inbound', 'add_funds', '25.00', 'USD', 'authorized', key, 0, customerId, null, null, null]);
      assert.match(p.external_id, /^openbank_/);
      assert.match(p.source_funding_method_external_id, /^fm_openbank_\d+_usd$/, 'the default funding method in the currency');

      const completed = await eventually(async () => {
        const now = (await payment(p.id)).body;
        return now.status === 'completed' ? now : undefined;
      // The whole suite shares this service's settler: on a busy machine a poll may come late.
      }, 18_000, 'the partner settles');
      assert.ok(completed.completed_at);
      assert.deepEqual(completed.status_history.map((h: { from: string | null; to: string }) => [h.from, h.to]),
        [[null, 'pending'], ['pending', 'sent'], ['sent', 'authorized'], ['authorized', 'completed']]);
      assert.equal((await balances(base(), owner.token)).USD.available, '25.00');

      const types: string[] = [];
      while (!types.includes('payment.completed') || !types.includes('balance.updated')) types.push((await stream.nextEvent()).event);
      assert.deepEqual(types.filter((t) => t.startsWith('payment.')), ['payment.sent', 'payment.completed']);

      await settledAfter('1.00');
      assert.equal((await balances(base(), owner.token)).USD.available, '26.00', 'credited once');
      const entries = await testService().runtime.db('journal_entries').where('payment_id', p.id);
      assert.deepEqual(entries.map((e: { kind: string }) => e.kind), ['payment_settle']);

      const replay = await addFunds({}, { idempotencyKey: key });
      assert.deepEqual([replay.status, replay.body.id, replay.body.status], [200, p.id, 'authorized'], 'a replay answers what the request answered');
    } finally {
      stream.close();
    }
  });

  it('counts resubmissions in retry_count: a partner outage ridden out on the request', async () => {
    const ridden = await addFunds({ amount: '2.00' }, { scenario: 'outage' });
    assert.equal(ridden.status, 201, JSON.stringify(ridden.body));
    assert.deepEqual([ridden.body.status, ridden.body.retry_count], ['authorized', 2], 'two 503s, then the third submission');
  });

  it('records a declined payment as failed, and never credits it', async () => {
    const declined = await addFunds({ amount: '7.00' }, { scenario: 'decline' });
    assert.equal(declined.status, 201, JSON.stringify(declined.body));
    assert.deepEqual([declined.body.status, declined.body.failure.code, declined.body.external_id], ['failed', 'partner_declined', null]);
    await settledAfter('1.00');
    assert.equal((await payment(declined.body.id)).body.status, 'failed');
    assert.deepEqual(await testService().runtime.db('journal_entries').where('payment_id', declined.body.id), [], 'nothing was credited for it');
  });

  it('answers 502 partner_error when the partner\'s answer is lost, keeps the payment readable, and the settler finds it', async function () {
    this.timeout(30_000);
    const lost = await addFunds({ amount: '3.00' }, { scenario: 'lost_answer' });
    expectError(lost, 502, 'partner_error');
    const paymentId = lost.body.details;
    const readable = await payment(paymentId);
    assert.deepEqual([readable.status, readable.body.status, readable.body.external_id], [200, 'pending', null]);
    const settled = await eventually(async () => {
      const now = (await payment(paymentId)).body;
      return now.status === 'completed' ? now : undefined;
    }, 25_000, 'the settler resubmits under the same reference, finds the payment, and it completes');
    assert.match(settled.external_id, /^openbank_/);
    assert.equal(settled.retry_count, 1, 'one resubmission');
    const atPartner = await testService().runtime.db('journal_entries').where('payment_id', paymentId);
    assert.equal(atPartner.length, 1, 'credited once');
  });

  it('asks the partner by reference before a sandbox fail of a payment whose answer was lost, and tells the partner: never a failure the partner does not know of', async function () {
    this.timeout(30_000);
    const lost = await addFunds({ amount: '4.00' }, { scenario: 'lost_answer' });
    expectError(lost, 502, 'partner_error');
    const paymentId = lost.body.details;
    assert.equal((await payment(paymentId)).body.external_id, null, 'the partner\'s id never came back');
    const failed = await call(base(), 'POST', `/v1/sandbox/payments/${paymentId}/fail`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    const now = (await payment(paymentId)).body;
    assert.match(now.external_id ?? '', /^openbank_/, 'the payment the partner made was found by its reference');
    if (failed.status === 200) {
      assert.deepEqual([failed.body.status, failed.body.external_id], ['failed', now.external_id]);
      // The partner was told: its own book has the payment stopped (reversed, never to settle),
      // so the settler, asking the partner, finds nothing to bring back to life.
      const atPartner = await testService().runtime.db('mock_rails.payments').where({ partner: 'openbank', reference: paymentId }).select('status');
      assert.deepEqual(atPartner.map((p: { status: string }) => p.status), ['reversed']);
    } else {
      // The partner had completed it first: the payment shows what the partner did.
      expectError(failed, 409, 'payment_state_conflict', 'action');
      assert.equal(now.status, 'completed');
    }
    const credited = await testService().runtime.db('journal_entries').where('payment_id', paymentId);
    assert.equal(credited.length, now.status === 'completed' ? 1 : 0, 'credited only if the partner collected it');
  });

  it('answers 409 to a sandbox fail of a payment whose answer was lost once the partner has completed it, and shows it completed, credited once', async function () {
    this.timeout(30_000);
    const lost = await addFunds({ amount: '4.50' }, { scenario: 'lost_answer' });
    expectError(lost, 502, 'partner_error');
    const paymentId = lost.body.details;
    const books = () => testService().runtime.db('mock_rails.payments').where({ partner: 'openbank', reference: paymentId });
    await eventually(async () => (await books().where((q) => q.where('status', 'completed').orWhere('due_at', '<=', new Date()))).length === 1 || undefined, 10_000, 'the partner completes it');
    const failed = await call(base(), 'POST', `/v1/sandbox/payments/${paymentId}/fail`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    expectError(failed, 409, 'payment_state_conflict', 'action');
    const now = (await payment(paymentId)).body;
    assert.equal(now.status, 'completed', 'the payment shows what the partner did');
    const credited = await testService().runtime.db('journal_entries').where('payment_id', paymentId);
    assert.equal(credited.length, 1, 'credited once');
  });

  it('keeps a 502 partner_error as the key\'s answer: the same request replays it, another body under the key is 409, two at once get one answer', async function () {
    this.timeout(30_000);
    const key = randomUUID();
    const [first, twin] = await Promise.all([
      addFunds({ amount: '6.00' }, { idempotencyKey: key, scenario: 'lost_answer' }),
      addFunds({ amount: '6.00' }, { idempotencyKey: key, scenario: 'lost_answer' }),
    ]);
    expectError(first, 502, 'partner_error');
    const paymentId = first.body.details;
    // The twin waited for the first and replays its answer, or (past the wait) says it is still running.
    if (twin.status !== 202 && twin.status !== 503) {
      expectError(twin, 502, 'partner_error');
      assert.equal(twin.body.details, paymentId);
    }
    const replay = await addFunds({ amount: '6.00' }, { idempotencyKey: key, scenario: 'lost_answer' });
    expectError(replay, 502, 'partner_error');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.body.details, paymentId, 'the same payment');
    expectError(await addFunds({ amount: '7.00' }, { idempotencyKey: key }), 409, 'idempotency_conflict', 'Idempotency-Key');
    const { rows } = await testService().runtime.db.raw('SELECT count(*)::int AS n FROM payments WHERE idempotency_key = ?', [key]);
    assert.equal(rows[0].n, 1, 'one payment under the key');
  });

  it('answers 202 with the pending payment while the partner is down, credits nothing, and the payment goes through once it is back', async function () {
    this.timeout(40_000);
    const key = randomUUID();
    const down = await addFunds({ amount: '4.00' }, { idempotencyKey: key, scenario: 'unavailable' });
    assert.equal(down.status, 202, JSON.stringify(down.body));
    assert.deepEqual([down.body.status, down.body.amount, down.body.external_id, down.body.idempotency_key], ['pending', '4.00', null, key]);
    const paymentId = down.body.id;
    assert.deepEqual([(await payment(paymentId)).body.status, (await payment(paymentId)).body.external_id], ['pending', null]);
    const again = await addFunds({ amount: '4.00' }, { idempotencyKey: key, scenario: 'unavailable' });
    assert.deepEqual([again.status, again.body.id, again.body.status], [202, paymentId, 'pending'], 'the same payment, submitted again');
    const done = await eventually(async () => {
      const now = (await payment(paymentId)).body;
      return now.status === 'completed' ? now : undefined;
    }, 30_000, 'the settler resubmits once the partner takes it, and it settles');
    assert.equal(done.retry_count, 10, 'five submissions of each request that ended 503 and the settler\'s, less the first');
    const atPartner = await testService().runtime.db('mock_rails.payments').where({ partner: 'openbank', reference: paymentId });
    assert.equal(atPartner.length, 1, 'one payment at the partner, whatever the submissions');
    const entries = await testService().runtime.db('journal_entries').where('payment_id', paymentId);
    assert.equal(entries.length, 1, 'credited once');
  });

  it('fails, with its event, a payment past the deadline only once the partner says it has none under its reference', async () => {
    const customer = (await createCustomer(base(), owner.key)).body.id;
    await linkCustomer(base(), owner.key, customer, 'openbank');
    const down = await addFunds({ customer_id: customer, amount: '6.00' }, { scenario: 'unavailable' });
    assert.deepEqual([down.status, down.body.status], [202, 'pending'], JSON.stringify(down.body));
    const stream = await openEventStream(base(), owner.token);
    try {
      const { runtime, config } = testService();
      const access = partnerAccess(config, runtime.db, railsUrl(), () => base());
      // Due now, and past a deadline of zero: no resubmission, the partner is asked instead.
      const settler = new PaymentSettler(runtime, access.links, access.clients, { intervalMs: 100, resubmitAfterMs: 0, pendingDeadlineMs: 0 });
      const failed = await eventually(async () => {
        await runtime.db('payments').where('id', down.body.id).update({ next_poll_at: new Date(0) });
        await settler.round();
        const now = (await payment(down.body.id)).body;
        return now.status === 'failed' ? now : undefined;
      }, 10_000, 'the settler fails it');
      assert.equal(failed.failure.code, 'partner_timeout');
      assert.match(failed.failure.message, /the partner has no payment under its reference: nothing moved/);
      let event;
      do event = await stream.nextEvent(); while (event.event !== 'payment.failed');
      assert.equal(JSON.parse(event.data).resource_id, down.body.id);
    } finally {
      stream.close();
    }
  });

  it('lists payments by customer and status, and keeps other accounts out', async () => {
    const listed = await call(base(), 'GET', `/v1/payments?customer_id=${customerId}&status=failed`, undefined, { token: owner.key });
    assert.equal(listed.status, 200);
    assert.ok(listed.body.data.length >= 1 && listed.body.data.every((p: { status: string; customer_id: string }) => p.status === 'failed' && p.customer_id === customerId));
    const stranger = await signUp(base());
    assert.deepEqual((await call(base(), 'GET', '/v1/payments', undefined, { token: stranger.key })).body.data, [], 'pinned to its own account');
    expectError(await call(base(), 'GET', `/v1/payments/${listed.body.data[0].id}`, undefined, { token: stranger.key }), 403, 'cross_account_access_denied');
    expectError(await payment(randomUUID()), 404, 'payment_not_found');
  });

  it('refuses, before anything moves, what it cannot do', async () => {
    const unlinked = (await createCustomer(base(), owner.key)).body.id;
    expectError(await addFunds({ partner: 'nowhere' }), 400, 'invalid_partner', 'partner');
    expectError(await addFunds({ partner: 'fiat' }), 400, 'invalid_partner', 'partner');
    expectError(await addFunds({ currency: 'USDC', amount: '1.000000' }), 400, 'invalid_currency', 'currency');
    expectError(await addFunds({ customer_id: unlinked }), 400, 'customer_not_linked', 'customer_id');
    expectError(await addFunds({ source_funding_method_external_id: 'fm_nobody' }), 400, 'invalid_request', 'source_funding_method_external_id');
    expectError(await addFunds({ amount: '-5' }), 400, 'invalid_request', 'amount');
    const stranger = await signUp(base());
    expectError(await addFunds({}, { key: stranger.key }), 403, 'cross_account_access_denied');
    expectError(await addFunds({}, { key: (await createKey(base(), owner.token, 'publishable')).key }), 403, 'publishable_key_write_denied');
    expectError(await addFunds({}, { key: (await createKey(base(), owner.token, 'restricted', ['payments:read'])).key }), 403, 'insufficient_scope');
    const stored = await testService().runtime.db('payments').where('customer_id', unlinked).count<{ count: string }[]>('* as count');
    assert.equal(stored[0].count, '0');
  });
});
