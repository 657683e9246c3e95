// payment.create: a payment through a partner (DESIGN.md section 5c), recorded before the API
// submits it; a payout holds its amount at once (available → pending), a pay-in moves nothing
// until it completes (payment-update.ts).
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { balanceEvent } from '../balance-events';
import { available, pending } from '../chart';
import { emptyDecision, post, refusal, type Decision } from '../decision';
import type { Metadata } from '../metadata';
import { Money, type Currency } from '../money';
import { paymentOutcome } from '../outcome';
import type { PaymentRecord } from '../payments';
import { paymentHold } from '../postings';
import { asScreened, type LedgerCommand } from './command';
import type { AccountFacts } from './facts';

/** Records a payment the API is about to submit to a partner (DESIGN.md section 5c). */
export interface PaymentCreate {
  payment_id: string;
  customer_id: string;
  partner: string;
  /** add_funds brings money in; send and claimless pay it out, held first. */
  kind: 'add_funds' | 'send' | 'claimless';
  amount: string;
  currency: Currency;
  idempotency_key: string;
  funding_method_external_id: string | null;
  payee?: Record<string, unknown> | null;
  purpose?: string | null;
  /** The client's own values; absent: none. */
  metadata?: Metadata;
}

export const paymentCreate: LedgerCommand<PaymentCreate> = {
  shape: { ids: ['payment_id', 'customer_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true, metadata: 'create' },
  parse: asScreened,
  needs: () => ({ sender: true }),
  accounts: (payload, accountId, facts) => (payload.kind === 'add_funds' || !facts.accountsById.has(accountId) ? [] : [available(accountId, payload.currency), pending(accountId, payload.currency)]),
  decide: ({ commandId, accountId, payload, facts, book, now }) => decidePaymentCreate(commandId, payload, facts.accountsById.get(accountId) ?? null, book, now),
};

export function decidePaymentCreate(commandId: string, command: PaymentCreate, account: AccountFacts | null, book: BalanceBook, now: Date): Decision {
  if (!account) return refusal('resource_not_found', 'the account does not exist');
  if (account.kybStatus !== 'active') return refusal('account_not_active', `the account's KYB status is ${account.kybStatus}; it must be active to move money`);
  const outbound = command.kind !== 'add_funds';
  const amount = new Money(command.amount);
  if (outbound && book.balance(available(account.id, command.currency)).isLessThan(amount)) {
    return refusal('insufficient_funds', `the available ${command.currency} balance is below the amount`, 'amount');
  }
  const payment: PaymentRecord = {
    id: command.payment_id, account_id: account.id, command_id: commandId, customer_id: command.customer_id, partner: command.partner,
    direction: outbound ? 'outbound' : 'inbound', kind: command.kind, amount: amount.toFixed(), currency: command.currency, status: 'pending',
    external_id: null, claim_link: null, idempotency_key: command.idempotency_key, retry_count: 0, submissions: 0, funding_method_external_id: command.funding_method_external_id,
    payee: command.payee ?? null, purpose: command.purpose ?? null, metadata: command.metadata ?? {},
    failure_code: null, failure_message: null, created_at: now, updated_at: now, completed_at: null,
  };
  const decision = emptyDecision(paymentOutcome(payment, true));
  if (outbound) {
    post(decision, book, paymentHold(randomUUID(), payment.id, account.id, payment.currency, amount));
    decision.events.push(balanceEvent(book, account.id, payment.currency));
  }
  decision.changes.push({ kind: 'payment', payment, isNew: true }, { kind: 'payment_transition', paymentId: payment.id, from: null, to: 'pending', at: now });
  return decision;
}
