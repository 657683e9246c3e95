// payment.create: a payment through a partner; a payout holds its amount at once (ledger/decide-payments.ts).
import { available, pending } from '../chart';
import { decidePaymentCreate } from '../decide-payments';
import type { PaymentCreate } from '../messages';
import { asScreened, type LedgerCommand } from './command';

export const paymentCreate: LedgerCommand<PaymentCreate> = {
  shape: { ids: ['payment_id', 'customer_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true, metadata: 'create' },
  parse: asScreened,
  needs: () => ({ sender: true }),
  accounts: (payload, accountId, facts) => (payload.kind === 'add_funds' || !facts.accountsById.has(accountId) ? [] : [available(accountId, payload.currency), pending(accountId, payload.currency)]),
  decide: ({ commandId, accountId, payload, facts, book, now }) => decidePaymentCreate(commandId, payload, facts.accountsById.get(accountId) ?? null, book, now),
};
