// The instruction a partner gets for a payment, built from the payment as the ledger recorded it,
// so that the request's first submission and every resubmission (the client's retry, the
// settler's) tell the partner the same thing: amount, payee, funding method and purpose.
import { formatAmount } from '../../ledger/money';
import type { Knex } from 'knex';
import type { PaymentRecord } from '../../ledger/payments';
import type { PartnerPaymentRequest } from './client';
import type { SandboxScenario } from './scenarios';

export function partnerRequestOf(payment: PaymentRecord, scenario: SandboxScenario | null = null): PartnerPaymentRequest {
  return {
    reference: payment.id, amount: formatAmount(payment.amount, payment.currency), currency: payment.currency,
    ...(payment.payee ? { beneficiary: payment.payee } : {}),
    metadata: { payment_id: payment.id, funding_method: payment.funding_method_external_id, purpose: payment.purpose },
    ...(scenario ? { scenario } : {}),
  };
}

/**
 * Notes that a pending payment's partner could not be reached just now (unavailable, no answer in
 * time): its pending deadline counts from here, so the time the partner was away cannot fail it
 * (migrations/20261129090000_partner_unreachable.ts).
 */
export async function markPartnerUnreachable(db: Knex, paymentId: string): Promise<void> {
  await db('payments').where({ id: paymentId, status: 'pending' }).update({ partner_unreachable_at: db.fn.now() });
}
