// payment.update: a payment moves on as its partner answers (DESIGN.md section 5c): sent,
// completed, failed or cancelled, settling through the partner's account. A pay-in credits the
// account once, when it completes; a payout leaves when it completes and is released when it fails
// or is cancelled; an answer about a finished payment changes nothing but the submissions counted.
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { balanceEvent } from '../balance-events';
import { available, partnerSettlement, pending } from '../chart';
import { emptyDecision, post, refusal, type Decision, type EventDraft } from '../decision';
import { formatAmount, Money } from '../money';
import { paymentOutcome } from '../outcome';
import { pathTo, type PaymentRecord, type PaymentStatus } from '../payments';
import { paymentRelease, payInSettled, payOutSettled } from '../postings';
import { asScreened, type LedgerCommand } from './command';

/** What the partner said of a payment (its submission answer, a later poll, a sandbox simulation). */
export interface PaymentUpdate {
  payment_id: string;
  /** `pending`: no news of the payment, only `submissions` to count. */
  status: 'pending' | 'sent' | 'authorized' | 'completed' | 'failed' | 'cancelled';
  external_id: string | null;
  claim_link: string | null;
  failure_code: string | null;
  failure_message: string | null;
  /** Resubmissions to the partner so far, as the caller knew them. */
  retry_count: number;
  /** Submissions this caller made to the partner (absent: none); the ledger adds them to the payment's, once per command. */
  submissions?: number;
}

export const paymentUpdate: LedgerCommand<PaymentUpdate> = {
  shape: { ids: ['payment_id'], amounts: [], currencies: [], accountIsUuid: false },
  parse: asScreened,
  needs: (payload) => ({ payments: [payload.payment_id] }),
  accounts(payload, _accountId, facts) {
    const payment = facts.payments.get(payload.payment_id);
    return payment ? [partnerSettlement(payment.partner, payment.currency), available(payment.account_id, payment.currency), pending(payment.account_id, payment.currency)] : [];
  },
  decide: ({ payload, locked, book, now }) => decidePaymentUpdate(payload, locked.payments.get(payload.payment_id) ?? null, book, now),
};

/**
 * The event type of each status that has one (SPEC.md section 6 lists payment.sent,
 * payment.completed and payment.failed): a cancelled payment ended without being paid, so it is
 * a payment.failed whose status says cancelled. The other statuses are steps on the way.
 */
const EVENT_TYPE: Partial<Record<PaymentStatus, string>> = {
  sent: 'payment.sent', completed: 'payment.completed', failed: 'payment.failed', cancelled: 'payment.failed',
};

function paymentEvent(payment: PaymentRecord, status: PaymentStatus): EventDraft {
  return {
    type: EVENT_TYPE[status]!, resourceType: 'payment', resourceId: payment.id, accountId: payment.account_id, status,
    amount: formatAmount(payment.amount, payment.currency), currency: payment.currency,
    attributes: { partner: payment.partner, kind: payment.kind, customer_id: payment.customer_id, external_id: payment.external_id, failure_code: payment.failure_code },
    metadata: payment.metadata,
  };
}

export function decidePaymentUpdate(update: PaymentUpdate, current: PaymentRecord | null, book: BalanceBook, now: Date): Decision {
  if (!current) return refusal('payment_not_found', 'no such payment', update.payment_id);
  const path = pathTo(current.status, update.status);
  // Every submission counts, also those of an answer that changes nothing (late, or none at all).
  const submissions = (current.submissions ?? 0) + Math.max(0, Math.trunc(update.submissions ?? 0));
  const counts = { submissions, retry_count: Math.max(current.retry_count, update.retry_count ?? 0, submissions - 1) };
  if (path.length === 0) {
    if (submissions === (current.submissions ?? 0)) return emptyDecision(paymentOutcome(current, false));
    const counted: PaymentRecord = { ...current, ...counts, updated_at: now };
    const decision = emptyDecision(paymentOutcome(counted, false));
    decision.changes.push({ kind: 'payment', payment: counted, isNew: false });
    return decision;
  }
  const payment: PaymentRecord = {
    ...current, ...counts, updated_at: now,
    external_id: update.external_id ?? current.external_id, claim_link: update.claim_link ?? current.claim_link,
  };
  if (update.status === 'failed' || update.status === 'cancelled') {
    payment.failure_code = update.failure_code ?? (update.status === 'cancelled' ? 'cancelled' : 'partner_error');
    payment.failure_message = update.failure_message;
  }
  const decision = emptyDecision(paymentOutcome(payment, false));
  decision.changes.push({ kind: 'payment', payment, isNew: false });
  let from: PaymentStatus = current.status;
  for (const to of path) {
    decision.changes.push({ kind: 'payment_transition', paymentId: payment.id, from, to, at: now });
    from = to;
  }
  payment.status = update.status;
  const amount = new Money(payment.amount);
  const moved = (() => {
    if (payment.status === 'completed') {
      payment.completed_at = now;
      return payment.direction === 'inbound'
        ? payInSettled(randomUUID(), payment.id, payment.partner, payment.account_id, payment.currency, amount)
        : payOutSettled(randomUUID(), payment.id, payment.partner, payment.account_id, payment.currency, amount);
    }
    const ended = payment.status === 'failed' || payment.status === 'cancelled';
    return ended && payment.direction === 'outbound' ? paymentRelease(randomUUID(), payment.id, payment.account_id, payment.currency, amount) : null;
  })();
  if (moved) post(decision, book, moved);
  for (const status of path) if (EVENT_TYPE[status]) decision.events.push(paymentEvent({ ...payment, status }, status));
  if (moved) decision.events.push(balanceEvent(book, payment.account_id, payment.currency));
  return decision;
}
