// Posting rules: pure functions from a business event to a balanced journal entry. Amounts are
// signed: a positive amount raises the holder's balance, and every entry sums to zero per
// currency (checked here and again by Postgres).
import { available, faucetEquity, pending } from './chart';
import type { EntryDraft, EntryKind, PostingDraft } from './entry';
import { assertEntryBalances } from './invariants';
import type { Amount, Currency } from './money';

function entry(id: string, kind: EntryKind, transferId: string | null, postings: PostingDraft[]): EntryDraft {
  const draft = { id, kind, transferId, postings };
  assertEntryBalances(draft);
  return draft;
}

/** Sandbox test funds: faucet equity → the account's available balance. */
export function faucetCredit(id: string, accountId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'faucet_credit', null, [
    { account: faucetEquity(currency), amount: amount.negated() },
    { account: available(accountId, currency), amount },
  ]);
}

/** A book transfer between two accounts of this ledger, final at once. */
export function internalTransfer(id: string, transferId: string, senderId: string, recipientId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'internal_transfer', transferId, [
    { account: available(senderId, currency), amount: amount.negated() },
    { account: available(recipientId, currency), amount },
  ]);
}

/** Holds the amount of a transfer that a partner rail is executing. */
export function holdForTransfer(id: string, transferId: string, senderId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'transfer_hold', transferId, [
    { account: available(senderId, currency), amount: amount.negated() },
    { account: pending(senderId, currency), amount },
  ]);
}

/** The rail settled: the held amount reaches the recipient's account. */
export function settleTransfer(id: string, transferId: string, senderId: string, recipientId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'transfer_settle', transferId, [
    { account: pending(senderId, currency), amount: amount.negated() },
    { account: available(recipientId, currency), amount },
  ]);
}

/** The rail failed or reversed the payment: the hold goes back to the sender. */
export function releaseTransfer(id: string, transferId: string, senderId: string, currency: Currency, amount: Amount): EntryDraft {
  return entry(id, 'transfer_release', transferId, [
    { account: pending(senderId, currency), amount: amount.negated() },
    { account: available(senderId, currency), amount },
  ]);
}
