// payment.update: a payment moves on (sent, completed, failed, reversed), settling through the partner's account.
import { available, partnerSettlement, pending } from '../chart';
import { decidePaymentUpdate } from '../decide-payments';
import type { PaymentUpdate } from '../messages';
import { asScreened, type LedgerCommand } from './command';

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
