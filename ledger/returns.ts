// What the two commands of a return share: reversals of transfers paid through a partner, to bank
// details or a chain address (DESIGN.md section 5h). transfer.reverse (ledger/commands/transfer-reverse.ts)
// holds the recipient's part (ledger/reversal-parts.ts) from its available, in the payout currency,
// and a partner command asks the transfer's partner to return it; the reversal is `pending`. The
// partner's answer comes back as transfer.return_result (ledger/commands/transfer-return-result.ts).
// A part that rounds to nothing to return has nothing for the partner to move: it completes in the
// round that decides it. Both name the same ledger accounts, announce the same events, and settle
// a completed return the same way.
import type { BalanceBook } from './balances';
import { balanceEvent } from './balance-events';
import { available, fxPosition, fxSpread, pending, type LedgerAccountRef } from './chart';
import { post, type Decision, type EventDraft } from './decision';
import { formatAmount, Money } from './money';
import { settleReturn } from './postings';
import type { TransferRecord, TransferReversal } from './transfers';

/** The ledger accounts a return of `transfer` posts to, or reads for its balance events. */
export function returnAccounts(transfer: TransferRecord): LedgerAccountRef[] {
  const recipientId = transfer.recipient_account_id!;
  const refs = [available(recipientId, transfer.payout_currency), pending(recipientId, transfer.payout_currency), available(transfer.account_id, transfer.currency)];
  if (transfer.payout_currency !== transfer.currency) refs.push(fxPosition(transfer.currency), fxPosition(transfer.payout_currency), fxSpread(transfer.payout_currency));
  return refs;
}

/** `transfer.reversed` (a completed reversal) or `reversal.failed`, the sender's, on the transfer. */
export function reversalEvent(record: TransferRecord, reversal: TransferReversal): EventDraft {
  const failed = reversal.status === 'failed';
  return {
    type: failed ? 'reversal.failed' : 'transfer.reversed', resourceType: 'transfer', resourceId: record.id, accountId: record.account_id, status: reversal.status,
    amount: reversal.amount, currency: record.currency, metadata: record.metadata,
    attributes: {
      reversal_id: reversal.id, reversed_amount: formatAmount(record.reversed_amount ?? '0', record.currency), reason: reversal.reason, reversal_metadata: reversal.metadata ?? {},
      ...(reversal.partner_return_id !== undefined ? { partner_return_id: reversal.partner_return_id } : {}),
      ...(failed ? { failure_code: reversal.failure_code, failure_message: reversal.failure_message } : {}),
    },
  };
}

/** The return completed: the settlement's legs reversed in the reversal's parts, under the reversal's id (reconciliation names it so). */
export function completeReturn(decision: Decision, record: TransferRecord, reversal: TransferReversal, book: BalanceBook): void {
  const recipientId = record.recipient_account_id!;
  post(decision, book, settleReturn(reversal.id, record.id, record.account_id, recipientId, record.currency, new Money(reversal.amount),
    record.payout_currency, new Money(reversal.payout_amount!), new Money(reversal.spread_amount ?? 0)));
  decision.events.push(reversalEvent(record, reversal), balanceEvent(book, record.account_id, record.currency), balanceEvent(book, recipientId, record.payout_currency));
}
