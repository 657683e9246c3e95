// One submitter of a payment at a time (src/partners/submission-lease.ts), on the real mock rails:
// the request that created a payment and the settler that takes it over later never call the
// partner at once, and a decline one of them got is never sent again by the other. Found by the
// simulation (seed 7): a request slow to record its decline let the settler resubmit the payment
// without its sandbox scenario; the partner paid it and the ledger, told of the decline first,
// failed it. The tests hold a partner's answer back (a slow link), so that the settler's window
// (PAYMENT_RESUBMIT_AFTER_MS, 4 s in tests) opens while the request still waits, or a sandbox
// `fail` comes while the settler's resubmission is on its way.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { testService } from '../hooks';
import { type SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { ownerWithCustomer } from '../support/partner-links';
import { restartLedger } from '../support/service';
import { PartnerClient, type PartnerPaymentRequest } from '../../src/partners/client';

describe('one submitter of a payment at a time', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  const db = () => testService().runtime.db;
  let owner: SignedUp;
  let customerId: string;
  const original = PartnerClient.prototype.submitPaymentAs;

  before(async () => {
    ({ owner, customerId } = await ownerWithCustomer(base(), ['openbank']));
  });
  afterEach(async () => {
    PartnerClient.prototype.submitPaymentAs = original;
    assert.deepEqual(await violations(db()), {}, 'the ledger invariants hold');
  });

  /** From now on, a decline of a submission in the decline scenario reaches its caller only after `whileHeld` has run. */
  function holdDeclines(whileHeld: () => Promise<void>): void {
    PartnerClient.prototype.submitPaymentAs = async function (this: PartnerClient, token: string, request: PartnerPaymentRequest, sent?: { submissions: number }) {
      try {
        return await original.call(this, token, request, sent);
      } catch (error) {
        if (request.scenario === 'decline') await whileHeld();
        throw error;
      }
    };
  }

  const addFunds = (amount: string, scenario: string | null) =>
    call(base(), 'POST', '/v1/payments/add-funds', { customer_id: customerId, partner: 'openbank', amount, currency: 'USD' },
      { token: owner.key, idempotencyKey: randomUUID(), headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
  const payment = async (id: string) => (await call(base(), 'GET', `/v1/payments/${id}`, undefined, { token: owner.key })).body;
  const atPartner = (reference: string) => db()('mock_rails.payments').where({ partner: 'openbank', reference }).select('status', 'amount');
  /**
   * Waits until `rounds` settler rounds have taken the payment past its window's opening (each moves
   * its next poll on to a later instant). A round before the window can move it past the opening
   * too, but only one, and a lane's rounds follow one another: with three seen, the second was
   * after the window and its decision for the payment is made.
   */
  const settlerRoundsTook = async (id: string, rounds: number) => {
    const opened = Date.parse((await payment(id)).created_at) + testService().config.paymentResubmitAfterMs;
    const seen = new Set<number>();
    await eventually(async () => {
      const { next_poll_at: next } = await db()('payments').where({ id }).first('next_poll_at');
      if (next.getTime() > opened) seen.add(next.getTime());
      return seen.size >= rounds ? true : undefined;
    }, 30_000, `${rounds} settler rounds took payment ${id} after its window opened`);
  };
  /** Waits until a payment made after `id` has completed: the settler's rounds that could have touched `id` are over. */
  const settlerPassedBy = async () => {
    const later = await addFunds('1.00', null);
    assert.equal(later.status, 201, JSON.stringify(later.body));
    await eventually(async () => ((await payment(later.body.id)).status === 'completed' ? true : undefined), 20_000, 'a later payment settles');
  };

  it('keeps the settler from resubmitting while the request that was declined has not heard it yet', async () => {
    const resubmitAfterMs = testService().config.paymentResubmitAfterMs;
    holdDeclines(() => sleep(resubmitAfterMs + 2_000));
    const declined = await addFunds('7.31', 'decline');
    assert.equal(declined.status, 201, JSON.stringify(declined.body));
    assert.deepEqual([declined.body.status, declined.body.failure?.code], ['failed', 'partner_declined'], JSON.stringify(declined.body));
    assert.deepEqual(await atPartner(declined.body.id), [], 'the partner paid nothing under the declined payment');
    await settlerPassedBy();
    assert.deepEqual([(await payment(declined.body.id)).status, await atPartner(declined.body.id)], ['failed', []], 'failed, and still nothing at the partner');
    assert.deepEqual(await db()('journal_entries').where('payment_id', declined.body.id), [], 'nothing credited');
  });

  it('refuses a sandbox fail of a pending payment while the settler is submitting it, and the payment ends as the partner made it', async () => {
    let target = '';
    let entered!: () => void;
    const settlerSubmitting = new Promise<void>((resolve) => { entered = resolve; });
    // The settler's resubmission (no scenario) of this payment reaches the partner 3 s late.
    PartnerClient.prototype.submitPaymentAs = async function (this: PartnerClient, token: string, request: PartnerPaymentRequest, sent?: { submissions: number }) {
      if (request.reference === target && request.scenario === undefined) {
        entered();
        await sleep(3_000);
      }
      return original.call(this, token, request, sent);
    };
    const pending = await addFunds('7.33', 'unavailable');
    assert.deepEqual([pending.status, pending.body.status], [202, 'pending'], JSON.stringify(pending.body));
    target = pending.body.id;
    await settlerSubmitting;
    const failed = await call(base(), 'POST', `/v1/sandbox/payments/${target}/fail`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    assert.deepEqual([failed.status, failed.body.error], [409, 'payment_state_conflict'], JSON.stringify(failed.body));
    const ended = await eventually(async () => {
      const [p, rail] = [await payment(target), (await atPartner(target))[0]];
      return p.status === 'completed' && rail?.status === 'completed' ? { p, rail } : undefined;
    }, 30_000, 'the payment completes at the partner and in the ledger');
    assert.equal(ended.rail.amount, '7.33');
  });

  it('fails a payment whose decline is on record while the ledger has not heard of it, and never sends it again', async () => {
    const service = testService();
    const index = service.roles.findIndex((r) => r.role === 'ledger');
    let ledgerStopped = false;
    // The ledger goes away between the partner's decline and the request's record of it.
    holdDeclines(async () => {
      await service.roles[index].stop();
      ledgerStopped = true;
    });
    try {
      const declined = await addFunds('7.32', 'decline');
      assert.ok(ledgerStopped, 'the partner declined it');
      assert.ok([201, 202].includes(declined.status), `answered ${declined.status}: ${JSON.stringify(declined.body)}`);
      const id: string = declined.body.id;
      // The settler's window opens with the payment still pending in the ledger's books, and its
      // rounds take the payment up and decide what to do with it.
      await settlerRoundsTook(id, 3);
      assert.equal((await db()('payments').where({ id }).first('status')).status, 'pending', 'the ledger has not recorded it');
      assert.deepEqual(await atPartner(id), [], 'the settler did not send it again');
      service.roles[index] = await restartLedger(service);
      ledgerStopped = false;
      const failed = await eventually(async () => { const p = await payment(id); return p.status === 'pending' ? undefined : p; }, 20_000, 'the payment ends');
      assert.deepEqual([failed.status, failed.failure?.code], ['failed', 'partner_declined'], JSON.stringify(failed));
      await settlerPassedBy();
      assert.deepEqual(await atPartner(id), [], 'never paid at the partner');
    } finally {
      if (ledgerStopped) service.roles[index] = await restartLedger(service);
    }
  });
});
