// The deadline of an `executing` transfer (README "A deadline for executing";
// consumers/partners/deadline.ts), driven directly with small settings against the test
// service's mock rails. A transfer whose instruction never runs (its claim already taken, as by an
// instruction lost after its claim) stays executing with its funds held; past the deadline the
// partner is asked what it holds under the transfer's reference:
//   none                → failed (`execution_deadline`), the hold released
//   the payment         → followed by a new instruction to `completed`, never failed
//   it cannot be asked  → nothing moves, `unreachable_since` marks it; asked again once it answers
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PaymentSettler } from '../../consumers/partners/settler';
import { partnerAccess } from '../../src/partner-links/access';
import { ExecutingDeadline } from '../../consumers/partners/deadline';
import { Money } from '../../ledger/money';
import { derivedUuid, idempotentCommandId } from '../../src/idempotency/derived-ids';
import { PartnerClient } from '../../src/partners/client';
import { railsUrl, testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { balances, fund, transferReaches } from '../support/money';
import { controlHeaders } from '../support/secrets';

/** Past this, a transfer is overdue here: far longer than any test runs, so only the transfers this file backdates are. */
const DEADLINE_MS = 30 * 60_000;
const LONG_AGO = () => new Date(Date.now() - 2 * DEADLINE_MS);

describe('the deadline of an executing transfer', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  const fiat = () => {
    const { config } = testService();
    // One attempt with a short timeout: a partner that is down is known at once.
    return new PartnerClient({ baseUrl: `${railsUrl()}/fiat`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret, timeoutMs: 1_000, attemptsMax: 1, backoffMsMax: 100 });
  };
  const checker = () => new ExecutingDeadline(testService().runtime, new Map([['fiat', fiat()]]), { deadlineMs: DEADLINE_MS, intervalMs: 100 });
  let bob: SignedUp;
  before(async () => { bob = await signUp(base()); });
  const statusOf = async (sender: SignedUp, transferId: string): Promise<string> =>
    (await call(base(), 'GET', `/v1/transfers/${transferId}`, undefined, { token: sender.key })).body.status;
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const bankOf = (who: SignedUp) => {
    const viban = who.vibans.find((v) => v.currency === 'USD')!;
    return { email: who.email, name: 'Bob', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency: 'USD' } };
  };

  /**
   * A bank transfer of `amount` whose instruction never runs: its claim is taken before the ledger
   * decides it (the dispatcher drops the instruction as a copy of one already run), then the
   * transfer and its claim are dated past the deadline. Returns the sender and the transfer id.
   */
  async function lostTransfer(amount: string, signUpBody: Record<string, unknown> = {}, backdate = true): Promise<{ sender: SignedUp; transferId: string }> {
    const { db } = testService().runtime;
    const sender = await signUp(base(), signUpBody);
    await fund(base(), sender.key, 'USD', '100.00');
    const key = randomUUID();
    const transferId = derivedUuid('transfer', idempotentCommandId(sender.account.id, key));
    await db('partner_instructions').insert({ transfer_id: transferId, attempt: 0, source: 'lost', claimed_at: LONG_AGO() });
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient: bankOf(bob), amount, currency: 'USD' }, { token: sender.key, idempotencyKey: key });
    assert.deepEqual([sent.status, sent.body.transfer_id, sent.body.status], [201, transferId, 'executing'], JSON.stringify(sent.body));
    if (backdate) await db('transfers').where('id', transferId).update({ updated_at: LONG_AGO() });
    const held = await balances(base(), sender.token);
    assert.deepEqual([held.USD.available, held.USD.pending], [new Money('100').minus(amount).toFixed(2), amount], 'the funds are held');
    return { sender, transferId };
  }

  it('fails a transfer whose partner confirms it holds no payment (execution_deadline), and releases its hold', async () => {
    const { sender, transferId } = await lostTransfer('12.34');
    assert.deepEqual(await checker().round(), { failed: 1, followed: 0, unreachable: 0 });
    const failed = await transferReaches(base(), sender.key, transferId, 'failed');
    assert.equal(failed.failure.code, 'execution_deadline');
    assert.deepEqual(failed.status_history.map((h: { to: string }) => h.to), ['pending', 'quoting', 'executing', 'failed']);
    const after = await balances(base(), sender.token);
    assert.deepEqual([after.USD.available, after.USD.pending], ['100.00', '0.00'], 'the hold released');
    assert.equal(await fiat().findPaymentByReference(transferId), null, 'nothing was paid');
  });

  it('counts the deadline of a transfer of an account on a test clock on the clock: not due a second before it, failed once the clock is past it', async () => {
    const frozen = Math.floor(Date.now() / 1000) * 1000 + 365 * 86_400_000; // a year ahead of the wall
    const clock = await call(base(), 'POST', '/v1/sandbox/test-clocks', { frozen_time: new Date(frozen).toISOString() });
    assert.equal(clock.status, 201, JSON.stringify(clock.body));
    const { sender, transferId } = await lostTransfer('7.00', { test_clock_id: clock.body.id }, false);
    const advanceTo = async (ms: number) => {
      const answer = await call(base(), 'POST', `/v1/sandbox/test-clocks/${clock.body.id}/advance`, { frozen_time: new Date(ms).toISOString() }, { token: sender.key });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      await eventually(async () => ((await call(base(), 'GET', `/v1/sandbox/test-clocks/${clock.body.id}`, undefined, { token: sender.key })).body.status === 'ready' ? true : undefined), 30_000, 'the clock ready');
    };
    await advanceTo(frozen + DEADLINE_MS - 1_000);
    assert.deepEqual(await checker().round(), { failed: 0, followed: 0, unreachable: 0 }, 'a second before its deadline on the clock');
    assert.equal(await statusOf(sender, transferId), 'executing');
    await advanceTo(frozen + DEADLINE_MS + 1_000);
    assert.deepEqual(await checker().round(), { failed: 1, followed: 0, unreachable: 0 }, 'past its deadline on the clock, though the wall is a year short of it');
    const failed = await transferReaches(base(), sender.key, transferId, 'failed');
    assert.equal(failed.failure.code, 'execution_deadline');
    assert.deepEqual((await balances(base(), sender.token)).USD.available, '100.00', 'the hold released');
  });

  it('follows a transfer the partner does hold to completed, never failing it', async () => {
    const { sender, transferId } = await lostTransfer('23.45');
    const recipientBefore = (await balances(base(), bob.token)).USD.available;
    // The partner made the payment; only its answer never reached us.
    const paid = await fiat().submitPayment({ reference: transferId, amount: '23.45', currency: 'USD' });
    assert.deepEqual(await checker().round(), { failed: 0, followed: 1, unreachable: 0 });
    const completed = await transferReaches(base(), sender.key, transferId, 'completed');
    assert.equal(completed.partner_payment_id, paid.id);
    assert.deepEqual(completed.status_history.map((h: { to: string }) => h.to), ['pending', 'quoting', 'executing', 'completed'], 'never failed');
    const after = await balances(base(), sender.token);
    assert.deepEqual([after.USD.available, after.USD.pending], ['76.55', '0.00']);
    const received = new Money((await balances(base(), bob.token)).USD.available).minus(recipientBefore).toFixed(2);
    assert.equal(received, '23.45', 'the recipient is paid once');
  });

  it('moves nothing while the partner cannot be asked, marks it unreachable, and fails it once the partner answers that it holds none', async () => {
    const { db } = testService().runtime;
    const { sender, transferId } = await lostTransfer('5.00');
    const down = await fetch(`${railsUrl()}/fiat/_control/outage?ms=3000`, { method: 'POST', headers: controlHeaders() });
    assert.equal(down.status, 200);
    assert.deepEqual(await checker().round(), { failed: 0, followed: 0, unreachable: 1 });
    const marked = await db('partner_instructions').where('transfer_id', transferId).first('unreachable_since', 'unreachable_reason');
    assert.ok(marked.unreachable_since instanceof Date, 'unreachable_since marks it');
    const held = await balances(base(), sender.token);
    assert.deepEqual([held.USD.available, held.USD.pending], ['95.00', '5.00'], 'the funds stay held');
    assert.equal((await call(base(), 'GET', `/v1/transfers/${transferId}`, undefined, { token: sender.key })).body.status, 'executing');

    // Once the partner answers again, its "none" decides.
    // The checker's rounds, or the service's own deadline loop, whichever asks first, fail it.
    await eventually(async () => { await checker().round(); return (await statusOf(sender, transferId)) === 'failed' ? true : undefined; }, 20_000, 'the partner answers again');
    const failed = await transferReaches(base(), sender.key, transferId, 'failed');
    assert.equal(failed.failure.code, 'execution_deadline');
    assert.deepEqual([(await balances(base(), sender.token)).USD.available], ['100.00']);
  });

  it('lists the transfers whose partner cannot be asked for the operator, longest unreachable first, until the partner answers', async () => {
    const first = await lostTransfer('3.00');
    const second = await lostTransfer('4.00');
    const mine = [first.transferId, second.transferId];
    const down = await fetch(`${railsUrl()}/fiat/_control/outage?ms=3000`, { method: 'POST', headers: controlHeaders() });
    assert.equal(down.status, 200);
    assert.deepEqual(await checker().round(), { failed: 0, followed: 0, unreachable: 2 });
    assert.deepEqual(await checker().round(), { failed: 0, followed: 0, unreachable: 2 }, 'still down');

    const master = { token: testService().runtime.config.masterKey };
    const listed = async (query: string) => {
      const page = await call(base(), 'GET', `/v1/unreachable-transfers?partner=fiat${query}`, undefined, master);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      return page.body;
    };
    // One a page, oldest mark first: this file's two follow each other.
    const all = (await listed('&limit=200')).data.filter((t: { id: string }) => mine.includes(t.id));
    assert.deepEqual(all.map((t: { id: string }) => t.id), mine, 'the first marked comes first');
    assert.deepEqual(all.map((t: Record<string, unknown>) => [t.account_id, t.partner, t.amount, t.currency, t.payout_amount, t.attempts]), [
      [first.sender.account.id, 'fiat', '3.00', 'USD', '3.00', 2], [second.sender.account.id, 'fiat', '4.00', 'USD', '4.00', 2],
    ]);
    assert.match(all[0].reason, /unavailable|503|down/i);
    assert.ok(Date.parse(all[0].unreachable_since) <= Date.parse(all[1].unreachable_since));
    const firstPage = await listed('&limit=1');
    assert.equal(firstPage.data.length, 1);
    assert.equal(firstPage.has_more, true);
    const secondPage = await listed(`&limit=1&before=${firstPage.next_cursor}`);
    assert.notEqual(secondPage.data[0].id, firstPage.data[0].id, 'the cursor moves on');
    const summary = await call(base(), 'GET', '/v1/unreachable-transfers/summary', undefined, master);
    assert.ok(summary.body.waiting.fiat >= 2, JSON.stringify(summary.body));
    // The funds stay held meanwhile, as the list says.
    const held = await balances(base(), first.sender.token);
    assert.deepEqual([held.USD.available, held.USD.pending], ['97.00', '3.00']);

    expectError(await call(base(), 'GET', '/v1/unreachable-transfers', undefined, { token: bob.key }), 403, 'insufficient_scope');
    expectError(await call(base(), 'GET', '/v1/unreachable-transfers?partner=nowhere', undefined, master), 400, 'invalid_request', 'partner');

    // Once the partner answers (it holds none), they fail and leave the list.
    await eventually(async () => {
      await checker().round();
      const statuses = await Promise.all([first, second].map(({ sender, transferId }) => statusOf(sender, transferId)));
      return statuses.every((status) => status === 'failed') ? true : undefined;
    }, 20_000, 'the partner answers again');
    for (const { sender, transferId } of [first, second]) assert.equal((await transferReaches(base(), sender.key, transferId, 'failed')).failure.code, 'execution_deadline');
    const after = (await listed('&limit=200')).data.filter((t: { id: string }) => mine.includes(t.id));
    assert.deepEqual(after, [], 'the list drops them');
  });

  it('asks a partner that is down once a round, however many transfers wait on it, and marks each of them', async () => {
    const { db } = testService().runtime;
    const lost = [await lostTransfer('1.00'), await lostTransfer('2.00'), await lostTransfer('3.00')];
    /** The real client, its lookups counted. */
    class CountedClient extends PartnerClient {
      lookups = 0;
      override async findPaymentByReference(reference: string) {
        this.lookups += 1;
        return super.findPaymentByReference(reference);
      }
    }
    const { config } = testService();
    const client = new CountedClient({ baseUrl: `${railsUrl()}/fiat`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret, timeoutMs: 1_000, attemptsMax: 1, backoffMsMax: 100 });
    const down = await fetch(`${railsUrl()}/fiat/_control/outage?ms=3000`, { method: 'POST', headers: controlHeaders() });
    assert.equal(down.status, 200);
    assert.deepEqual(await new ExecutingDeadline(testService().runtime, new Map([['fiat', client]]), { deadlineMs: DEADLINE_MS, intervalMs: 100 }).round(), { failed: 0, followed: 0, unreachable: 3 });
    assert.equal(client.lookups, 1, 'the partner was asked once');
    const marks = await db('partner_instructions').whereIn('transfer_id', lost.map((l) => l.transferId)).select('unreachable_since', 'unreachable_reason');
    assert.equal(marks.filter((m) => m.unreachable_since instanceof Date && /unavailable|503|down/i.test(m.unreachable_reason)).length, 3, JSON.stringify(marks));
    await eventually(async () => {
      await checker().round();
      const statuses = await Promise.all(lost.map(({ sender, transferId }) => statusOf(sender, transferId)));
      return statuses.every((status) => status === 'failed') ? true : undefined;
    }, 20_000, 'the partner answers again');
  });

  it('stops, as the payment settler does, without waiting out its interval (a service stops in a moment, not ten seconds)', async () => {
    const { runtime, config } = testService();
    const access = partnerAccess(config, runtime.db, railsUrl(), () => base());
    const loops = [
      new ExecutingDeadline(runtime, new Map([['fiat', fiat()]]), { deadlineMs: DEADLINE_MS, intervalMs: 600_000 }),
      new PaymentSettler(runtime, access.links, access.clients, { intervalMs: 600_000, resubmitAfterMs: 0, pendingDeadlineMs: 0 }),
    ];
    for (const loop of loops) loop.start();
    // Each is in its first round or already waiting out its ten minutes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await Promise.all(loops.map((loop) => loop.stop()));
    assert.ok(Date.now() - started < 5_000, `stopped after ${Date.now() - started} ms`);
  });
});
