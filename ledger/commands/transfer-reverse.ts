// transfer.reverse: part or all of a completed transfer given back to its sender (DESIGN.md section
// 5h). A book transfer is reversed in one entry, the recipient's available to the sender's; a
// transfer paid through a partner is a return the partner makes (decideReturnRequest here; its
// answer is transfer.return_result; what both share is ../returns.ts). Each reversal is kept on the
// transfer's record with `reversed_amount`, the sum of those pending or completed, which never
// exceeds the transfer: the round decides reversals of one transfer one after the other on its
// locked record.
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { balanceEvent } from '../balance-events';
import { available } from '../chart';
import { emptyDecision, post, refusal, type Decision } from '../decision';
import type { Metadata } from '../metadata';
import { formatAmount, Money, type Amount } from '../money';
import { refused, transferOutcome } from '../outcome';
import { holdReturn, transferReversal } from '../postings';
import { completeReturn, returnAccounts, reversalEvent } from '../returns';
import { reversalParts } from '../reversal-parts';
import { DECIMAL_AMOUNT } from '../screen';
import type { TransferRecord, TransferReversal } from '../transfers';
import type { LedgerCommand } from './command';

/**
 * Gives back part or all of a completed transfer to its sender (DESIGN.md section 5h): `amount`
 * null is what is left to reverse; `reversal_id` is derived from the command, as a hold's capture id.
 */
export interface TransferReverse {
  transfer_id: string;
  reversal_id: string;
  amount: string | null;
  reason: string | null;
  /** A sandbox failure the client asked the partner to act out on a return (Sandbox-Scenario header); absent: none. */
  scenario?: string | null;
  /** The reversal's own values; absent: none. */
  metadata?: Metadata;
}

export const transferReverse: LedgerCommand<TransferReverse> = {
  // amount may be null (what is left): parse checks it.
  shape: { ids: ['transfer_id', 'reversal_id'], amounts: [], currencies: [], accountIsUuid: true, metadata: 'create' },
  parse(payload) {
    const { amount, reason, scenario } = payload as TransferReverse;
    if (amount !== null && (typeof amount !== 'string' || !DECIMAL_AMOUNT.test(amount) || !new Money(amount).isGreaterThan(0))) {
      return { refusal: refused('invalid_request', 'amount must be null or a decimal amount above zero as text (e.g. "10.50")', 'amount') };
    }
    if (reason !== null && typeof reason !== 'string') return { refusal: refused('invalid_request', 'reason must be text', 'reason') };
    if (scenario !== undefined && scenario !== null && typeof scenario !== 'string') return { refusal: refused('invalid_request', 'scenario must be text', 'scenario') };
    return { payload: payload as TransferReverse };
  },
  needs: (payload) => ({ sender: true, transfers: [payload.transfer_id] }),
  accounts(payload, accountId, facts) {
    const transfer = facts.transfers.get(payload.transfer_id);
    if (!transfer || transfer.account_id !== accountId || transfer.recipient_account_id === null) return [];
    if (transfer.partner !== 'book') return returnAccounts(transfer);
    return [available(transfer.recipient_account_id, transfer.currency), available(accountId, transfer.currency)];
  },
  decide({ accountId, payload, locked, book, now }) {
    const current = locked.transfers.get(payload.transfer_id) ?? null;
    const asked = payload.amount === null ? null : new Money(payload.amount);
    const refusedNow = refuseReversal(current, accountId, asked);
    if (refusedNow) return refusedNow;
    const transfer = current!;
    const amount = asked ?? new Money(transfer.amount).minus(transfer.reversed_amount ?? 0);
    return transfer.partner === 'book' ? decideBookReversal(transfer, payload, amount, book, now) : decideReturnRequest(transfer, payload, amount, book, now);
  },
};

/** Why a transfer takes no reversal of `amount` now, or null. */
function refuseReversal(transfer: TransferRecord | null, accountId: string, amount: Amount | null): Decision | null {
  if (!transfer || transfer.account_id !== accountId) return refusal('transfer_not_found', 'no such transfer', 'transfer_id');
  if (transfer.status !== 'completed') return refusal('transfer_not_reversible', `the transfer is ${transfer.status}: only a completed transfer is reversed`, 'transfer_id');
  if (transfer.recipient_account_id === null || (transfer.partner !== 'book' && transfer.partner_payment_id === null)) {
    return refusal('transfer_not_reversible', 'the transfer\'s recipient or its partner payment is unknown: nothing can be given back', 'transfer_id');
  }
  const left = new Money(transfer.amount).minus(transfer.reversed_amount ?? 0);
  if (left.isZero()) return refusal('reversal_exceeded', 'the transfer is reversed in full already (its pending reversals counted)', 'amount');
  if (amount !== null && amount.isGreaterThan(left)) return refusal('reversal_exceeded', `at most ${formatAmount(left, transfer.currency)} ${transfer.currency} of the transfer is left to reverse`, 'amount');
  return null;
}

/** A reversal of a book transfer: one entry, the recipient's available back to the sender's. */
function decideBookReversal(transfer: TransferRecord, payload: TransferReverse, amount: Amount, book: BalanceBook, now: Date): Decision {
  const recipientId = transfer.recipient_account_id!;
  if (book.balance(available(recipientId, transfer.currency)).isLessThan(amount)) {
    return refusal('insufficient_funds', 'the recipient no longer has the amount to give back', 'amount');
  }
  const reversal: TransferReversal = {
    id: payload.reversal_id, amount: formatAmount(amount, transfer.currency), reason: payload.reason, status: 'completed', created_at: now.toISOString(), metadata: payload.metadata ?? {},
  };
  const record: TransferRecord = {
    ...transfer, updated_at: now,
    reversed_amount: new Money(transfer.reversed_amount ?? 0).plus(amount).toFixed(), reversals: [...(transfer.reversals ?? []), reversal],
  };
  const decision = emptyDecision(transferOutcome(record, true));
  decision.changes.push({ kind: 'transfer', transfer: record, isNew: false });
  post(decision, book, transferReversal(randomUUID(), transfer.id, transfer.account_id, recipientId, transfer.currency, amount));
  decision.events.push(reversalEvent(record, reversal), balanceEvent(book, transfer.account_id, transfer.currency), balanceEvent(book, recipientId, transfer.currency));
  return decision;
}

/**
 * A reversal of `amount` of a completed transfer paid through a partner, already checked against
 * what is left (refuseReversal): refused 422 insufficient_funds when the recipient's available in
 * the payout currency does not cover its part.
 */
function decideReturnRequest(transfer: TransferRecord, payload: TransferReverse, amount: Amount, book: BalanceBook, now: Date): Decision {
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
    completeReturn(decision, record, reversal, book);
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
