// The ledger's decision on a reconciliation adjustment (DESIGN.md section 5e): finance resolved an
// exception by adjusting, and the difference moves between the partner's settlement account and
// suspense, in one balanced entry, like every movement of money.
import { emptyDecision, post, refusal, type Decision } from './decide';
import type { BalanceBook } from './balances';
import type { ReconciliationAdjust } from './messages';
import { formatAmount, isCurrency, Money } from './money';
import { reconciliationAdjustment } from './postings';

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
