// The ledger's decisions on returns: reversals of transfers paid through a partner, to bank details
// or a chain address (DESIGN.md section 5h). The round that decides the reversal holds the
// recipient's part (ledger/reversal-parts.ts) from its available, in the payout currency, and a
// partner command asks the transfer's partner to return it; the reversal is `pending`. The
// partner's answer comes back as transfer.return_result:
//   completed → the held part leaves the recipient, the sender is credited the reversed amount in
//               the currency it sent (the legs of the settlement reversed in their parts, at the
//               transfer's own rate), `transfer.reversed`
//   failed    → the held part goes back to the recipient's available, the reversal `failed`, the
//               transfer's reversed_amount lowered by it, `reversal.failed`
// An answer for a reversal no longer pending (a duplicate, or a late one after the failure) changes
// nothing. A part that rounds to nothing to return has nothing for the partner to move: it
// completes in the round that decides it.
import { transferOutcome } from './outcome';
import { randomUUID } from 'node:crypto';
import { available, fxPosition, fxSpread, pending, type LedgerAccountRef } from './chart';
import type { BalanceBook } from './balances';
import { balanceEvent, emptyDecision, post, refusal, type Decision, type EventDraft } from './decide';
import type { TransferReturnResult, TransferReverse } from './messages';
import { formatAmount, Money, type Amount } from './money';
import { holdReturn, releaseReturn, settleReturn } from './postings';
import { reversalParts } from './reversal-parts';
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

/** The record with `reversal` in place of the one of its id. */
const withReversal = (record: TransferRecord, reversal: TransferReversal): TransferRecord => ({
  ...record, reversals: (record.reversals ?? []).map((r) => (r.id === reversal.id ? reversal : r)),
});

/** The return completed: the settlement's legs reversed in the reversal's parts, under the reversal's id (reconciliation names it so). */
function complete(decision: Decision, record: TransferRecord, reversal: TransferReversal, book: BalanceBook): void {
  const recipientId = record.recipient_account_id!;
  post(decision, book, settleReturn(reversal.id, record.id, record.account_id, recipientId, record.currency, new Money(reversal.amount),
    record.payout_currency, new Money(reversal.payout_amount!), new Money(reversal.spread_amount ?? 0)));
  decision.events.push(reversalEvent(record, reversal), balanceEvent(book, record.account_id, record.currency), balanceEvent(book, recipientId, record.payout_currency));
}

/**
 * A reversal of `amount` of a completed transfer paid through a partner, already checked against
 * what is left (commands/transfer-reverse.ts): refused 422 insufficient_funds when the recipient's
 * available in the payout currency does not cover its part.
 */
export function decideReturnRequest(transfer: TransferRecord, payload: TransferReverse, amount: Amount, book: BalanceBook, now: Date): Decision {
  const recipientId = transfer.recipient_account_id!;
  const parts = reversalParts(transfer, amount);
  if (book.balance(available(recipientId, transfer.payout_currency)).isLessThan(parts.payout)) {
    return refusal('insufficient_funds', `the recipient no longer has the ${formatAmount(parts.payout, transfer.payout_currency)} ${transfer.payout_currency} to give back`, 'amount');
  }
  const reversal: TransferReversal = {
    id: payload.reversal_id, amount: formatAmount(amount, transfer.currency), reason: payload.reason, status: parts.payout.isZero() ? 'completed' : 'pending',
    created_at: now.toISOString(), metadata: payload.metadata ?? {}, payout_amount: formatAmount(parts.payout, transfer.payout_currency),
    ...(transfer.payout_currency !== transfer.currency ? { spread_amount: formatAmount(parts.spread, transfer.payout_currency) } : {}),
    partner_return_id: null, failure_code: null, failure_message: null,
  };
  const record: TransferRecord = {
    ...transfer, updated_at: now,
    reversed_amount: new Money(transfer.reversed_amount ?? 0).plus(amount).toFixed(), reversals: [...(transfer.reversals ?? []), reversal],
  };
  const decision = emptyDecision(transferOutcome(record, true));
  decision.changes.push({ kind: 'transfer', transfer: record, isNew: false });
  if (reversal.status === 'completed') {
    complete(decision, record, reversal, book);
    return decision;
  }
  post(decision, book, holdReturn(randomUUID(), transfer.id, recipientId, transfer.payout_currency, parts.payout));
  decision.changes.push({
    kind: 'partner_instruction', partner: transfer.partner, accountId: transfer.account_id, type: 'transfer.return',
    payload: {
      transfer_id: transfer.id, reversal_id: reversal.id, payment_id: transfer.partner_payment_id!, amount: reversal.payout_amount!,
      currency: transfer.payout_currency, attempt: 0, scenario: payload.scenario ?? null,
    },
  });
  decision.events.push(balanceEvent(book, recipientId, transfer.payout_currency));
  return decision;
}

/** The partner's final word on a return (see the top of this file). */
export function decideReturnResult(result: TransferReturnResult, current: TransferRecord | null, book: BalanceBook, now: Date): Decision {
  if (!current) return refusal('transfer_not_found', 'no such transfer', 'transfer_id');
  const asked = (current.reversals ?? []).find((r) => r.id === result.reversal_id);
  if (!asked || asked.payout_amount === undefined) return refusal('resource_not_found', 'the transfer has no such return', 'reversal_id');
  if (asked.status !== 'pending') return emptyDecision(transferOutcome(current, false));
  const partnerReturnId = result.partner_return_id ?? null;
  if (result.outcome === 'completed') {
    const reversal: TransferReversal = { ...asked, status: 'completed', partner_return_id: partnerReturnId };
    const record = { ...withReversal(current, reversal), updated_at: now };
    const decision = emptyDecision(transferOutcome(record, false));
    decision.changes.push({ kind: 'transfer', transfer: record, isNew: false });
    complete(decision, record, reversal, book);
    return decision;
  }
  const reversal: TransferReversal = { ...asked, status: 'failed', partner_return_id: partnerReturnId, failure_code: result.failure_code ?? 'partner_error', failure_message: result.failure_message };
  const record: TransferRecord = {
    ...withReversal(current, reversal), updated_at: now, reversed_amount: new Money(current.reversed_amount ?? 0).minus(asked.amount).toFixed(),
  };
  const decision = emptyDecision(transferOutcome(record, false));
  decision.changes.push({ kind: 'transfer', transfer: record, isNew: false });
  const recipientId = record.recipient_account_id!;
  post(decision, book, releaseReturn(randomUUID(), record.id, recipientId, record.payout_currency, new Money(asked.payout_amount)));
  decision.events.push(reversalEvent(record, reversal), balanceEvent(book, recipientId, record.payout_currency));
  return decision;
}
