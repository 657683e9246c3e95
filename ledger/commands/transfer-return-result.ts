// transfer.return_result: a partner's final word on a return it was asked for (DESIGN.md section
// 5h; the request is transfer.reverse, what both share is ../returns.ts):
//   completed → the held part leaves the recipient, the sender is credited the reversed amount in
//               the currency it sent (the legs of the settlement reversed in their parts, at the
//               transfer's own rate), `transfer.reversed`
//   failed    → the held part goes back to the recipient's available, the reversal `failed`, the
//               transfer's reversed_amount lowered by it, `reversal.failed`
// An answer for a reversal no longer pending (a duplicate, or a late one after the failure) changes
// nothing.
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { balanceEvent } from '../balance-events';
import { emptyDecision, post, refusal, type Decision } from '../decision';
import { Money } from '../money';
import { refused, transferOutcome } from '../outcome';
import { releaseReturn } from '../postings';
import { completeReturn, returnAccounts, reversalEvent } from '../returns';
import type { TransferRecord, TransferReversal } from '../transfers';
import { asScreened, type LedgerCommand } from './command';

/** A partner's final word on a return (DESIGN.md section 5h), fed back to the ledger by a partner dispatcher. */
export interface TransferReturnResult {
  transfer_id: string;
  reversal_id: string;
  outcome: 'completed' | 'failed';
  /** The partner's id of the return, when it made one. */
  partner_return_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
}

export const transferReturnResult: LedgerCommand<TransferReturnResult> = {
  // A partner dispatcher's, as transfer.partner_result is.
  shape: { ids: ['transfer_id', 'reversal_id'], amounts: [], currencies: [], accountIsUuid: false },
  parse(payload) {
    const { outcome } = payload as TransferReturnResult;
    if (outcome !== 'completed' && outcome !== 'failed') return { refusal: refused('invalid_request', 'outcome must be completed or failed', 'outcome') };
    return asScreened(payload);
  },
  needs: (payload) => ({ transfers: [payload.transfer_id] }),
  accounts(payload, _accountId, facts) {
    const transfer = facts.transfers.get(payload.transfer_id);
    return transfer && transfer.recipient_account_id !== null ? returnAccounts(transfer) : [];
  },
  decide: ({ payload, locked, book, now }) => decideReturnResult(payload, locked.transfers.get(payload.transfer_id) ?? null, book, now),
};

/** The record with `reversal` in place of the one of its id. */
const withReversal = (record: TransferRecord, reversal: TransferReversal): TransferRecord => ({
  ...record, reversals: (record.reversals ?? []).map((r) => (r.id === reversal.id ? reversal : r)),
});

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
    completeReturn(decision, record, reversal, book);
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
