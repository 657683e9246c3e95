// reconciliation.adjust: finance resolved an exception by adjusting (DESIGN.md section 5e), and the
// difference moves between the partner's settlement account and suspense, in one balanced entry,
// like every movement of money.
import type { BalanceBook } from '../balances';
import { partnerSettlement, reconciliationSuspense } from '../chart';
import { emptyDecision, post, refusal, type Decision } from '../decision';
import { formatAmount, isCurrency, Money, type Currency } from '../money';
import { reconciliationAdjustment } from '../postings';
import { asScreened, type LedgerCommand } from './command';

/**
 * Finance resolves a reconciliation exception by adjusting (DESIGN.md section 5e): the ledger
 * moves `amount` (the difference statement − ledger, signed as the partner sees it) between the
 * partner's settlement account and the suspense account. The entry id is derived from the
 * exception, so the exception is adjusted once however often this is sent.
 */
export interface ReconciliationAdjust {
  exception_id: string;
  entry_id: string;
  partner: string;
  currency: Currency;
  amount: string;
}

export const reconciliationAdjust: LedgerCommand<ReconciliationAdjust> = {
  // Finance names the partner's settlement account (`reconciliation:<partner>`), not an account.
  shape: { ids: ['exception_id', 'entry_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: false },
  parse: asScreened,
  needs: () => ({}),
  accounts: ({ partner, currency }) => (isCurrency(currency) ? [partnerSettlement(partner, currency), reconciliationSuspense(currency)] : []), // else refused: no such currency
  decide: ({ payload, book }) => decideReconciliationAdjust(payload, book),
};

export function decideReconciliationAdjust(command: ReconciliationAdjust, book: BalanceBook): Decision {
  if (!isCurrency(command.currency)) return refusal('invalid_request', `${String(command.currency)} is not a currency`, 'currency');
  const difference = new Money(command.amount);
  if (!difference.isFinite() || difference.isZero()) return refusal('invalid_request', 'an adjustment moves an amount other than zero', 'amount');
  const decision = emptyDecision({
    kind: 'reconciliation_adjustment', entry_id: command.entry_id, partner: command.partner, currency: command.currency,
    amount: formatAmount(difference, command.currency),
  });
  post(decision, book, reconciliationAdjustment(command.entry_id, command.partner, command.currency, difference));
  return decision;
}
