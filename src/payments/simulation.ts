// Sandbox simulation (DESIGN.md section 5c): drive a payment to its next state on demand, as
// Wise's simulation endpoints do, so every event (and every balance movement behind it) can be
// produced without waiting for a partner. The ledger records the move as it records a partner's
// answer. A move that ends a payment the partner holds (`fail`, `cancel`, `expire-claim`) is told
// to the partner first, so the two agree: a claim link expires, any other payment is stopped. A
// partner that refuses because the payment has already ended there (the payee claimed it, the
// chain confirmed it) is asked what became of it, and the ledger records that instead: a payment
// the partner paid is never cancelled and its hold never released. A pending payment without the
// partner's id is looked up by its reference first (an answer lost on its way back).
import type { PaymentUpdate } from '../../ledger/commands/payment-update';
import { FINAL_PAYMENT_STATUSES, updateFromPartner, type PaymentRecord, type PaymentStatus } from '../../ledger/payments';
import type { Environment } from '../config';
import { DomainError } from '../domain-error';
import { isPartnerError } from '../partners/errors';
import { tellPartnerControl, type SandboxControl } from '../partners/sandbox-control';
import type { PartnerSlug } from '../partners/registry';
import { assertOwnResource } from '../http/acting-account';
import { paymentView } from '../ledger-client/answers';
import { endSubmission, giveBackSubmission, takeSubmission, type UnsentEnd } from '../partners/submission-lease';
import { recordPaymentUpdate, type PaymentRouteDeps } from './submission';
import { paymentSchema } from './schema';
import type { RouteDef } from '../http/route';

const ACTIONS = ['settle', 'fail', 'cancel', 'expire-claim'] as const;
type Action = (typeof ACTIONS)[number];

/**
 * What each action records, and from which statuses it may. `settle` needs a payment the partner
 * has taken (`sent`, `authorized`): a `pending` one never reached it, and settling it would
 * credit a pay-in that was never collected. The partner settles it first, and refuses one it has
 * ended or will reverse.
 */
const MOVES: Record<Action, { to: PaymentStatus; from: readonly PaymentStatus[]; failure: string | null }> = {
  settle: { to: 'completed', from: ['sent', 'authorized'], failure: null },
  fail: { to: 'failed', from: ['pending', 'sent', 'authorized'], failure: 'simulated_failure' },
  cancel: { to: 'cancelled', from: ['pending', 'sent'], failure: 'cancelled' },
  'expire-claim': { to: 'cancelled', from: ['sent'], failure: 'claim_expired' },
};

/** The rail's sandbox control an action is told to the partner by: settle, or end the payment (its claim link expires, or it is stopped). */
const controlOf = (action: Action, payment: PaymentRecord): SandboxControl => (action === 'settle' ? 'settle' : payment.claim_link !== null ? 'expire-claim' : 'cancel');

/**
 * Tells the partner the action first. True when the partner did it, false when it will not (409:
 * the payment ended there otherwise, or, for settle, is on its way to being reversed: a pay-in the
 * partner will reverse is not settled by a button). A payment the partner never acknowledged has
 * nothing there to stop, and nothing there to settle.
 */
async function tellPartner(railsUrl: string, controlSecret: string, payment: PaymentRecord, action: Action): Promise<boolean> {
  if (payment.external_id === null) return action !== 'settle';
  const answer = await tellPartnerControl(railsUrl, controlSecret, payment.partner, controlOf(action, payment), payment.external_id);
  if (answer === 'unreachable') throw new DomainError('partner_unavailable', `${payment.partner} could not ${action} the payment`, payment.id);
  return answer === 'done';
}

/**
 * A payment without the partner's id may still have been made there: the answer to its submission
 * was lost or came after our wait. Asked by its reference, what the partner holds is recorded
 * first, so the move that follows is told to the partner; null from the partner (it holds none)
 * leaves the payment as it was, never sent. An unavailable partner confirms nothing: 503.
 */
async function adoptPartnerPayment(deps: PaymentRouteDeps, payment: PaymentRecord): Promise<PaymentRecord> {
  let seen;
  try {
    seen = await deps.clients(payment.partner as PartnerSlug).findPaymentByReference(payment.id);
  } catch (error) {
    if (!isPartnerError(error)) throw error;
    throw new DomainError('partner_unavailable', `${payment.partner} could not say whether it holds the payment`, payment.id);
  }
  const update = seen ? updateFromPartner(payment, seen) : null;
  return update ? recordPaymentUpdate(deps, payment, { payment_id: payment.id, retry_count: payment.retry_count, ...update }) : payment;
}

/** Asks the partner what became of the payment and has the ledger record it; the payment as then held. */
async function recordPartnerState(deps: PaymentRouteDeps, payment: PaymentRecord): Promise<PaymentRecord> {
  const partner = payment.partner as PartnerSlug;
  const seen = await deps.links.withToken(await deps.links.activeLink(payment.customer_id, partner),
    (token) => deps.clients(partner).getPaymentAs(token, payment.external_id!));
  const update = updateFromPartner(payment, seen);
  return update ? recordPaymentUpdate(deps, payment, { payment_id: payment.id, retry_count: payment.retry_count, ...update }) : payment;
}

export function paymentSimulationRoute(deps: PaymentRouteDeps, environment: Environment, railsUrl: () => string, controlSecret: string): RouteDef {
  const { reads } = deps;
  return {
    method: 'POST', path: '/v1/sandbox/payments/{id}/{action}', operationId: 'simulatePayment', tag: 'sandbox',
    summary: 'Sandbox: settle, fail or cancel a payment now, or expire its claim link, with the events and balance movements that follow',
    auth: { kind: 'key', scope: 'payments:write' }, idempotent: true,
    params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, action: { type: 'string', enum: [...ACTIONS] } } },
    response: { status: 200, description: 'the payment in its new state', schema: paymentSchema },
    errors: ['payment_not_found', 'partner_unavailable', 'payment_state_conflict'],
    errorNotes: {
      payment_state_conflict: 'settle of a payment still pending (the partner never took it: nothing was collected) or that the partner will not settle (it ended there, or will be reversed), or fail, cancel or expire-claim of a payment that had already ended at the partner (the payee claimed it): the payment now shows what the partner did; or fail or cancel of a pending payment while the service is submitting it to its partner (repeat in a moment)',
    },
    handler: async (request) => {
      if (environment !== 'sandbox') throw new DomainError('resource_not_found', 'sandbox routes do not exist in the live environment');
      const action = request.params.action as Action;
      const stored = await reads.byId(request.params.id);
      if (!stored) throw new DomainError('payment_not_found', 'no such payment', request.params.id);
      assertOwnResource(request, stored.account_id, stored.id);
      if (stored.external_id !== null || stored.status !== 'pending') return simulate(deps, railsUrl(), controlSecret, stored, stored, action, null);
      // Unsent: asked for at the partner and ended here while no submitter can send it (submission-lease.ts).
      const lease = (await takeSubmission(deps.db, stored.id))?.token ?? null;
      if (lease === null) throw submitting(stored);
      try {
        return await simulate(deps, railsUrl(), controlSecret, stored, await adoptPartnerPayment(deps, stored), action, lease);
      } finally {
        await giveBackSubmission(deps.db, stored.id, lease);
      }
    },
  };
}

/** The answer while another submitter has the unsent payment (submitting it, or ending it): its outcome is not known yet. */
const submitting = (payment: PaymentRecord): DomainError =>
  new DomainError('payment_state_conflict', `the payment is being submitted to ${payment.partner} or has just ended there: read it, or repeat the request in a moment`, 'action');

/**
 * Applies `action` to `payment` (`stored` as the request found it, before asking the partner by
 * reference). `lease`: this request's submission lease of an unsent payment, whose end is written
 * down before the ledger records it, so no submitter sends it afterwards.
 */
async function simulate(
  deps: PaymentRouteDeps, railsUrl: string, controlSecret: string, stored: PaymentRecord, payment: PaymentRecord, action: Action, lease: string | null,
): Promise<{ status: 200; body: unknown }> {
  const move = MOVES[action];
  if (action === 'expire-claim' && payment.claim_link === null) throw new DomainError('invalid_request', 'the payment has no claim link', 'action');
  if (action === 'settle' && payment.status === 'pending') {
    throw new DomainError('payment_state_conflict', 'the payment is pending: the partner has not taken it, so nothing was collected or paid to settle', 'action');
  }
  if (!move.from.includes(payment.status)) {
    // Asking the partner by reference found it ended there: a conflict with what the client saw, not a bad request.
    if (move.from.includes(stored.status)) throw new DomainError('payment_state_conflict', `the payment had already ended at ${payment.partner}: it is ${payment.status}`, 'action');
    const why = FINAL_PAYMENT_STATUSES.includes(payment.status) ? 'it has ended' : `${action} applies to a payment that is ${move.from.join(' or ')}`;
    throw new DomainError('invalid_request', `the payment is ${payment.status}: ${why}`, 'action');
  }
  if (!(await tellPartner(railsUrl, controlSecret, payment, action))) {
    const now = payment.external_id === null ? payment : await recordPartnerState(deps, payment);
    if (now.status === move.to) return { status: 200, body: paymentView(now) }; // it had ended the same way (settled, or a claim link that expired)
    throw new DomainError('payment_state_conflict', action === 'settle'
      ? `${payment.partner} will not settle the payment: it is ${now.status}${now.status === payment.status ? ' there, and due to be reversed or ended otherwise' : ''}`
      : `the payment had already ended at ${payment.partner}: it is ${now.status}`, 'action');
  }
  const update: PaymentUpdate = {
    payment_id: payment.id, status: move.to as PaymentUpdate['status'], external_id: null, claim_link: null,
    failure_code: move.failure, failure_message: move.failure ? `sandbox simulation: ${action}` : null, retry_count: payment.retry_count,
  };
  if (lease !== null && payment.external_id === null && update.failure_code !== null) {
    const end: UnsentEnd = { status: update.status as UnsentEnd['status'], failure_code: update.failure_code, failure_message: update.failure_message! };
    if (!(await endSubmission(deps.db, payment.id, lease, end))) throw submitting(payment);
  }
  return { status: 200, body: paymentView(await recordPaymentUpdate(deps, payment, update)) };
}
