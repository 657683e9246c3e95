// transfer.partner_result: a partner's final answer on a transfer it executes (SPEC.md section 3):
// completed settles the held amount to the recipient; failed or rolled_back (the partner declined,
// reversed, or confirmed at the execution deadline that it holds no payment) gives it back to the
// sender, where it came from: the wallet a capture of a hold on it paid from (DESIGN.md section
// 5g), the main balance otherwise. A wallet closed since takes no money, and the main balance
// takes it instead. A late `completed`, after the ledger failed the transfer, is the partner's truth.
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { balanceEvent, senderBalanceEvents, sideAccounts } from '../balance-events';
import { available, fxPosition, fxSpread, lateCompletionReceivable, MAIN_WALLET, pending, spendable } from '../chart';
import { emptyDecision, post, refusal, type Decision } from '../decision';
import { formatAmount, Money } from '../money';
import { transferOutcome } from '../outcome';
import { conversionOf, releaseTransfer, reholdLateTransfer, settleTransfer } from '../postings';
import { walk } from '../transfer-lifecycle';
import { TERMINAL_STATUSES, type TransferRecord } from '../transfers';
import type { WalletRecord } from '../wallets';
import { asScreened, type LedgerCommand } from './command';

/** A partner's final word on a transfer, fed back to the ledger by a partner dispatcher. */
export interface TransferPartnerResult {
  transfer_id: string;
  outcome: 'completed' | 'failed' | 'rolled_back';
  partner_payment_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
}

export const transferPartnerResult: LedgerCommand<TransferPartnerResult> = {
  shape: { ids: ['transfer_id'], amounts: [], currencies: [], accountIsUuid: false },
  parse: asScreened,
  needs: (payload) => ({ transfers: [payload.transfer_id] }),
  accounts(payload, _accountId, facts) {
    const transfer = facts.transfers.get(payload.transfer_id);
    if (!transfer) return [];
    const refs = [available(transfer.account_id, transfer.currency), pending(transfer.account_id, transfer.currency)];
    // A failed payout from a wallet goes back to it, and its balance event reads it.
    if (transfer.from_wallet_id !== null) refs.push(...sideAccounts(transfer.account_id, transfer.from_wallet_id, transfer.currency));
    if (transfer.recipient_account_id) refs.push(available(transfer.recipient_account_id, transfer.payout_currency));
    if (transfer.payout_currency !== transfer.currency) refs.push(fxPosition(transfer.currency), fxPosition(transfer.payout_currency), fxSpread(transfer.payout_currency));
    // A late completion may owe what the sender's balance no longer covers (decideLateCompletion).
    if (transfer.status === 'failed' && payload.outcome === 'completed') refs.push(lateCompletionReceivable(transfer.currency));
    return refs;
  },
  decide: ({ payload, locked, book, now }) => decidePartnerResult(payload, locked.transfers.get(payload.transfer_id) ?? null, locked.wallets, book, now),
};

/**
 * Where a transfer's money goes back to, and is held again from on a late completion: the wallet
 * it came from while that wallet is open (`wallets`: as locked for the round), else "main".
 */
function returnWalletOf(record: Pick<TransferRecord, 'from_wallet_id'>, wallets: Map<string, WalletRecord>): string {
  const wallet = record.from_wallet_id === null ? undefined : wallets.get(record.from_wallet_id);
  return wallet && wallet.closed_at === null ? wallet.id : MAIN_WALLET;
}

/**
 * A partner's final answer on an executing transfer. Answers for finished transfers change
 * nothing, but one: a `completed` for a transfer the ledger failed (decideLateCompletion).
 * `wallets`: the wallet the transfer came from, as locked for the round (none for the main balance).
 */
export function decidePartnerResult(result: TransferPartnerResult, current: TransferRecord | null, wallets: Map<string, WalletRecord>, book: BalanceBook, now: Date): Decision {
  if (!current) return refusal('transfer_not_found', 'no such transfer', result.transfer_id);
  if (current.status === 'failed' && result.outcome === 'completed' && current.recipient_account_id !== null) {
    return decideLateCompletion(result, current, wallets, book, now);
  }
  if (TERMINAL_STATUSES.includes(current.status)) return emptyDecision(transferOutcome(current, false));
  const record: TransferRecord = { ...current, updated_at: now, partner_payment_id: result.partner_payment_id ?? current.partner_payment_id };
  const decision = emptyDecision(transferOutcome(record, false));
  decision.changes.push({ kind: 'transfer', transfer: record, isNew: false });
  const amount = new Money(record.amount);
  const entryId = randomUUID();
  if (result.outcome === 'completed') {
    post(decision, book, settleTransfer(entryId, record.id, record.account_id, record.recipient_account_id!, record.currency, amount, conversionOf(record)));
    record.completed_at = now;
    walk(record, ['completed'], now, decision);
    decision.events.push(balanceEvent(book, record.account_id, record.currency), balanceEvent(book, record.recipient_account_id!, record.payout_currency));
  } else {
    const walletId = returnWalletOf(record, wallets);
    post(decision, book, releaseTransfer(entryId, record.id, record.account_id, walletId, record.currency, amount));
    record.failure_code = result.failure_code ?? (result.outcome === 'rolled_back' ? 'partner_reversed' : 'partner_error');
    record.failure_message = result.failure_message;
    walk(record, [result.outcome], now, decision);
    decision.events.push(...senderBalanceEvents(book, record.account_id, walletId, record.currency, true));
  }
  return decision;
}

/**
 * The partner paid a transfer the ledger had failed (and released): the partner's truth decides.
 * The amount is held again (reholdLateTransfer: from the available balance it was released to,
 * the rest owed through the late-completion receivable) and settled as usual; the transfer ends
 * `completed`, its failure kept in `late_completion` for the record, and finance is told: the
 * decision carries the `late_completion` exception the round opens in finance's queue.
 */
function decideLateCompletion(result: TransferPartnerResult, current: TransferRecord, wallets: Map<string, WalletRecord>, book: BalanceBook, now: Date): Decision {
  const record: TransferRecord = {
    ...current, updated_at: now, completed_at: now, partner_payment_id: result.partner_payment_id ?? current.partner_payment_id,
    failure_code: null, failure_message: null,
  };
  const decision = emptyDecision(transferOutcome(record, false));
  decision.changes.push({ kind: 'transfer', transfer: record, isNew: false });
  const amount = new Money(record.amount);
  const walletId = returnWalletOf(record, wallets);
  const left = book.balance(spendable(record.account_id, walletId, record.currency));
  const covered = Money.min(left.isNegative() ? new Money(0) : left, amount);
  const reholdId = randomUUID();
  post(decision, book, reholdLateTransfer(reholdId, record.id, record.account_id, walletId, record.currency, amount, new Money(covered)));
  post(decision, book, settleTransfer(randomUUID(), record.id, record.account_id, record.recipient_account_id!, record.currency, amount, conversionOf(record)));
  record.late_completion = {
    failure_code: current.failure_code, failure_message: current.failure_message, failed_at: current.updated_at.toISOString(),
    receivable: formatAmount(amount.minus(covered), record.currency),
  };
  decision.changes.push({
    kind: 'late_completion',
    exception: {
      transferId: record.id, partner: record.partner, currency: record.currency, amount: formatAmount(amount, record.currency),
      reheld: formatAmount(covered, record.currency), receivable: record.late_completion.receivable, entryId: reholdId,
      partnerPaymentId: record.partner_payment_id, overturned: record.late_completion,
    },
  });
  walk(record, ['completed'], now, decision);
  decision.events.push(...senderBalanceEvents(book, record.account_id, walletId, record.currency, true), balanceEvent(book, record.recipient_account_id!, record.payout_currency));
  return decision;
}
