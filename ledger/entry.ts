// A journal entry before it is stored: what the posting rules (postings.ts) build and the
// invariants (invariants.ts) and balances (balances.ts) read.
import type { LedgerAccountRef } from './chart';
import type { Amount } from './money';

export type EntryKind = 'faucet_credit' | 'internal_transfer' | 'transfer_hold' | 'transfer_settle' | 'transfer_release' | 'transfer_rehold' | 'fx_conversion' | 'payment_settle' | 'payment_hold' | 'payment_release' | 'reconciliation_adjustment'
  | 'wallet_transfer' | 'hold_create' | 'hold_increment' | 'hold_capture' | 'hold_release' | 'transfer_reversal'
  | 'return_hold' | 'return_settle' | 'return_release';
/** The kinds that post to customers' accounts (a reconciliation adjustment posts to system accounts only). */
export type CustomerEntryKind = Exclude<EntryKind, 'reconciliation_adjustment'>;

export interface PostingDraft {
  account: LedgerAccountRef;
  amount: Amount;
}

export interface EntryDraft {
  id: string;
  kind: EntryKind;
  transferId: string | null;
  /** The persisted FX quote a conversion executed. */
  quoteId: string | null;
  /** The partner payment the entry moves money for. */
  paymentId: string | null;
  postings: PostingDraft[];
}
