// Sandbox simulation (DESIGN.md section 5c): drive a payment to its next state on demand, as
// Wise's simulation endpoints do, so every event (and every balance movement behind it) can be
// produced without waiting for a partner. The ledger records the move as it records a partner's
// answer; claim links are expired at the partner too, so the partner and the ledger agree.
import type { PaymentUpdate } from '../../ledger/messages';
import { FINAL_PAYMENT_STATUSES, type PaymentStatus } from '../../ledger/payments';
import type { Environment } from '../config';
import { DomainError } from '../errors';
import { assertOwnResource } from './acting';
import { paymentView } from './outcomes';
import { recordPaymentUpdate, type PaymentRouteDeps } from './payment-submission';
import { paymentSchema } from './payments-schema';
import type { RouteDef } from './route';

const ACTIONS = ['settle', 'fail', 'cancel', 'expire-claim'] as const;
type Action = (typeof ACTIONS)[number];

/** What each action records, and from which statuses it may. */
const MOVES: Record<Action, { to: PaymentStatus; from: readonly PaymentStatus[]; failure: string | null }> = {
  settle: { to: 'completed', from: ['pending', 'sent', 'authorized'], failure: null },
  fail: { to: 'failed', from: ['pending', 'sent', 'authorized'], failure: 'simulated_failure' },
  cancel: { to: 'cancelled', from: ['pending', 'sent'], failure: 'cancelled' },
  'expire-claim': { to: 'cancelled', from: ['sent'], failure: 'claim_expired' },
};

export function paymentSimulationRoute(deps: PaymentRouteDeps, environment: Environment, railsUrl: () => string): RouteDef {
  const { reads } = deps;
  return {
    method: 'POST', path: '/v1/sandbox/payments/{id}/{action}', operationId: 'simulatePayment', tag: 'sandbox',
    summary: 'Sandbox: settle, fail or cancel a payment now, or expire its claim link, with the events and balance movements that follow',
    auth: { kind: 'key', scope: 'payments:write' }, idempotent: true,
    params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, action: { type: 'string', enum: [...ACTIONS] } } },
    response: { status: 200, description: 'the payment in its new state', schema: paymentSchema },
    errors: ['payment_not_found', 'partner_unavailable'],
    handler: async (request) => {
      if (environment !== 'sandbox') throw new DomainError('resource_not_found', 'sandbox routes do not exist in the live environment');
      const action = request.params.action as Action;
      const payment = await reads.byId(request.params.id);
      if (!payment) throw new DomainError('payment_not_found', 'no such payment', request.params.id);
      assertOwnResource(request, payment.account_id, payment.id);
      const move = MOVES[action];
      if (action === 'expire-claim' && payment.claim_link === null) throw new DomainError('invalid_request', 'the payment has no claim link', 'action');
      if (!move.from.includes(payment.status)) {
        const why = FINAL_PAYMENT_STATUSES.includes(payment.status) ? 'it has ended' : `${action} applies to a payment that is ${move.from.join(' or ')}`;
        throw new DomainError('invalid_request', `the payment is ${payment.status}: ${why}`, 'action');
      }
      if (payment.claim_link !== null && (action === 'expire-claim' || action === 'cancel')) { // the link must stop working too
        const expired = await fetch(`${railsUrl()}/${payment.partner}/_control/expire-claim/${encodeURIComponent(payment.external_id!)}`, { method: 'POST' }).catch(() => null);
        if (!expired || (!expired.ok && expired.status !== 409)) throw new DomainError('partner_unavailable', `${payment.partner} could not expire the claim link`, payment.id);
      }
      const update: PaymentUpdate = {
        payment_id: payment.id, status: move.to as PaymentUpdate['status'], external_id: null, claim_link: null,
        failure_code: move.failure, failure_message: move.failure ? `sandbox simulation: ${action}` : null, retry_count: payment.retry_count,
      };
      return { status: 200, body: paymentView(await recordPaymentUpdate(deps, payment, update)) };
    },
  };
}

