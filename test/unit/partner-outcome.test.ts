// The partner dispatcher's decision table (consumers/partners/outcome.ts): a partner answer in,
// the next step out, in the order of the table there. Pure: no partner, no broker.
import assert from 'node:assert/strict';
import { ATTEMPTS_MAX, decidePartnerOutcome, UNEXPECTED_CHECKS_MAX, type PartnerAnswer, type PartnerDecision } from '../../consumers/partners/outcome';
import type { TransferExecute } from '../../ledger/messages';
import type { PartnerPayment, PartnerPaymentStatus } from '../../src/partners/client';
import { PartnerError, type PartnerErrorKind } from '../../src/partners/errors';

const TRANSFER_ID = '5f0c3c1e-4a5b-4d4f-9a53-6b1f6f0f1a01';
const PAYMENT_ID = 'fiat_0123456789abcdef01234567';

function command(attempt = 0): TransferExecute {
  return { transfer_id: TRANSFER_ID, amount: '10.00', currency: 'USD', beneficiary: { name: 'Ada' }, attempt };
}

function payment(status: PartnerPaymentStatus): PartnerAnswer {
  const answer: PartnerPayment = { id: PAYMENT_ID, reference: TRANSFER_ID, amount: '10.00', currency: 'USD', status, created_at: '2024-01-01T00:00:00.000Z' };
  return { kind: 'payment', payment: answer };
}

function partnerError(kind: PartnerErrorKind, paymentId: string | null = null): PartnerAnswer {
  const error = new PartnerError({ kind, message: `partner said ${kind}`, httpStatus: null, partnerCode: null });
  return { kind: 'error', error, paymentId };
}

function failed(code: string, partnerPaymentId: string | null = null): { outcome: 'failed'; code: string; partnerPaymentId: string | null } {
  return { outcome: 'failed', code, partnerPaymentId };
}

/** A failure the dispatcher sends only once the partner confirms it holds no payment under our reference. */
function confirmed(code: string): { confirm: 'failed'; code: string } {
  return { confirm: 'failed', code };
}

/** The decision reduced to what the table states; failure messages are prose, checked apart. */
function summary(decision: PartnerDecision): unknown {
  if (decision.kind === 'confirm') return confirmed(decision.result.failure_code!);
  if (decision.kind !== 'result') return decision;
  const { outcome, failure_code: code, partner_payment_id: partnerPaymentId } = decision.result;
  return { outcome, code, partnerPaymentId };
}

describe('partner outcome: what the dispatcher does after a partner answer', () => {
  const last = ATTEMPTS_MAX;
  const table: Array<[why: string, attempt: number, answer: PartnerAnswer, expected: unknown]> = [
    ['payment completed → completed, with the partner payment id', 0, payment('completed'), { outcome: 'completed', code: null, partnerPaymentId: PAYMENT_ID }],
    ['payment reversed → rolled_back partner_reversed', 0, payment('reversed'), { outcome: 'rolled_back', code: 'partner_reversed', partnerPaymentId: PAYMENT_ID }],
    ['payment pending → poll it', 0, payment('pending'), { kind: 'poll', paymentId: PAYMENT_ID }],
    ['payment authorized → poll it', 0, payment('authorized'), { kind: 'poll', paymentId: PAYMENT_ID }],
    ['declined → failed partner_declined, no payment id', 0, partnerError('declined'), failed('partner_declined')],
    ['rejected → failed partner_rejected', 0, partnerError('rejected'), failed('partner_rejected')],
    ['rejected while polling → failed partner_rejected, with the known payment id', 0, partnerError('rejected', PAYMENT_ID), failed('partner_rejected', PAYMENT_ID)],
    ['unexpected, no payment known → requeue: the resubmission finds the payment if it exists', 0, partnerError('unexpected'), { kind: 'requeue' }],
    ['unexpected on the last check that may requeue → requeue', UNEXPECTED_CHECKS_MAX - 2, partnerError('unexpected'), { kind: 'requeue' }],
    ['unexpected after UNEXPECTED_CHECKS_MAX submissions → failed partner_error once the partner confirms it holds none', UNEXPECTED_CHECKS_MAX - 1, partnerError('unexpected'), confirmed('partner_error')],
    ['unexpected while polling a known payment → requeue, never failed at once', UNEXPECTED_CHECKS_MAX - 1, partnerError('unexpected', PAYMENT_ID), { kind: 'requeue' }],
    ['unexpected while polling at ATTEMPTS_MAX → requeue: the partner holds the payment, it is followed', last, partnerError('unexpected', PAYMENT_ID), { kind: 'requeue' }],
    ['unavailable on the first attempt → requeue', 0, partnerError('unavailable'), { kind: 'requeue' }],
    ['unavailable on the last attempt that may requeue → requeue', last - 1, partnerError('unavailable'), { kind: 'requeue' }],
    ['unavailable at ATTEMPTS_MAX → failed partner_unavailable once the partner confirms it holds none', last, partnerError('unavailable'), confirmed('partner_unavailable')],
    ['unavailable while polling at ATTEMPTS_MAX → requeue: the partner holds the payment, it is followed', last, partnerError('unavailable', PAYMENT_ID), { kind: 'requeue' }],
    ['poll ran out of time → requeue', 0, { kind: 'poll_timeout', paymentId: PAYMENT_ID }, { kind: 'requeue' }],
    ['poll ran out of time on the last attempt that may requeue → requeue', last - 1, { kind: 'poll_timeout', paymentId: PAYMENT_ID }, { kind: 'requeue' }],
    ['poll ran out of time at ATTEMPTS_MAX → requeue: a payment the partner holds is never failed by us', last, { kind: 'poll_timeout', paymentId: PAYMENT_ID }, { kind: 'requeue' }],
    ['unknown partner slug → failed invalid_partner', 0, { kind: 'unknown_partner', partner: 'nowhere' }, failed('invalid_partner')],
  ];

  for (const [why, attempt, answer, expected] of table) {
    it(why, () => {
      assert.deepEqual(summary(decidePartnerOutcome(command(attempt), answer)), expected);
    });
  }

  it('any other error is a bug: it propagates, for the dead-letter topic', () => {
    const bug = new TypeError('cannot read properties of undefined');
    assert.throws(() => decidePartnerOutcome(command(), { kind: 'error', error: bug, paymentId: null }), (error) => error === bug);
  });

  it('a result names the transfer and says why it failed in words; a completed one has no failure', () => {
    const declined = decidePartnerOutcome(command(), partnerError('declined'));
    assert.ok(declined.kind === 'result');
    assert.equal(declined.result.transfer_id, TRANSFER_ID);
    assert.match(declined.result.failure_message ?? '', /declined/);
    const completed = decidePartnerOutcome(command(), payment('completed'));
    assert.ok(completed.kind === 'result');
    assert.deepEqual(completed.result, { transfer_id: TRANSFER_ID, outcome: 'completed', partner_payment_id: PAYMENT_ID, failure_code: null, failure_message: null });
  });

  it('giving up says how many attempts were made and that the partner confirmed it holds nothing', () => {
    const gaveUp = decidePartnerOutcome(command(ATTEMPTS_MAX), partnerError('unavailable'));
    assert.ok(gaveUp.kind === 'confirm');
    assert.match(gaveUp.result.failure_message ?? '', new RegExp(`${ATTEMPTS_MAX + 1} attempts; the partner confirmed it holds no payment`));
  });
});
