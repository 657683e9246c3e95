// transfer.reverse: part or all of a completed book transfer given back to its sender, in one
// entry, the recipient's available to the sender's (DESIGN.md section 5h). Each reversal is kept on
// the transfer's record with `reversed_amount`, their sum, which never exceeds the transfer: the
// round decides reversals of one transfer one after the other on its locked record. Transfers paid
// through a partner (a return the partner must make) are refused as not reversible here.
import { randomUUID } from 'node:crypto';
import { available } from '../chart';
import { balanceEvent, emptyDecision, post, refusal, type Decision } from '../decide';
import type { TransferReverse } from '../messages';
import { formatAmount, Money, type Amount } from '../money';
import { refused } from '../outcome';
import { transferReversal } from '../postings';
import { DECIMAL_AMOUNT } from '../screen';
import type { TransferRecord } from '../transfers';
import type { LedgerCommand } from './command';

/** Why a transfer takes no reversal of `amount` now, or null. */
function refuseReversal(transfer: TransferRecord | null, accountId: string, amount: Amount | null): Decision | null {
  if (!transfer || transfer.account_id !== accountId) return refusal('transfer_not_found', 'no such transfer', 'transfer_id');
  if (transfer.status !== 'completed') return refusal('transfer_not_reversible', `the transfer is ${transfer.status}: only a completed transfer is reversed`, 'transfer_id');
  if (transfer.partner !== 'book' || transfer.recipient_account_id === null) {
    return refusal('transfer_not_reversible', 'a transfer paid through a partner is not reversed here: only a transfer between two accounts of this service is', 'transfer_id');
  }
  const left = new Money(transfer.amount).minus(transfer.reversed_amount ?? 0);
  if (left.isZero()) return refusal('reversal_exceeded', 'the transfer is reversed in full already', 'amount');
  if (amount !== null && amount.isGreaterThan(left)) return refusal('reversal_exceeded', `at most ${formatAmount(left, transfer.currency)} ${transfer.currency} of the transfer is left to reverse`, 'amount');
  return null;
}

export const transferReverse: LedgerCommand<TransferReverse> = {
  parse(payload) {
    const { amount, reason } = payload as TransferReverse;
    if (amount !== null && (typeof amount !== 'string' || !DECIMAL_AMOUNT.test(amount) || !new Money(amount).isPositive())) {
      return { refusal: refused('invalid_request', 'amount must be null or a decimal amount above zero as text (e.g. "10.50")', 'amount') };
    }
    if (reason !== null && typeof reason !== 'string') return { refusal: refused('invalid_request', 'reason must be text', 'reason') };
    return { payload: payload as TransferReverse };
  },
  needs: (payload) => ({ sender: true, transfers: [payload.transfer_id] }),
  accounts(payload, accountId, facts) {
    const transfer = facts.transfers.get(payload.transfer_id);
    if (!transfer || transfer.account_id !== accountId || transfer.recipient_account_id === null) return [];
    return [available(transfer.recipient_account_id, transfer.currency), available(accountId, transfer.currency)];
  },
  decide({ accountId, payload, locked, book, now }) {
    const current = locked.transfers.get(payload.transfer_id) ?? null;
    const asked = payload.amount === null ? null : new Money(payload.amount);
    const refusedNow = refuseReversal(current, accountId, asked);
    if (refusedNow) return refusedNow;
    const transfer = current!;
    const amount = asked ?? new Money(transfer.amount).minus(transfer.reversed_amount ?? 0);
    const recipientId = transfer.recipient_account_id!;
    if (book.balance(available(recipientId, transfer.currency)).isLessThan(amount)) {
      return refusal('insufficient_funds', 'the recipient no longer has the amount to give back', 'amount');
    }
    const reversal = {
      id: payload.reversal_id, amount: formatAmount(amount, transfer.currency), reason: payload.reason, status: 'completed' as const, created_at: now.toISOString(),
      metadata: payload.metadata ?? {},
    };
    const record: TransferRecord = {
      ...transfer, updated_at: now,
      reversed_amount: new Money(transfer.reversed_amount ?? 0).plus(amount).toFixed(), reversals: [...(transfer.reversals ?? []), reversal],
    };
    const decision = emptyDecision({ kind: 'transfer', created: true, transfer: record });
    decision.transfer = record;
    post(decision, book, transferReversal(randomUUID(), transfer.id, accountId, recipientId, transfer.currency, amount));
    decision.events.push({
      type: 'transfer.reversed', resourceType: 'transfer', resourceId: transfer.id, accountId, status: 'completed',
      amount: reversal.amount, currency: transfer.currency, metadata: record.metadata,
      attributes: { reversal_id: reversal.id, reversed_amount: formatAmount(record.reversed_amount!, transfer.currency), reason: reversal.reason, reversal_metadata: reversal.metadata },
    }, balanceEvent(book, accountId, transfer.currency), balanceEvent(book, recipientId, transfer.currency));
    return decision;
  },
};
