// What the ledger decides of one command: its outcome (accepted with its record, or refused with a
// code), the entries it posts, the events it announces, and the records it changes, as a list of
// changes each of one kind. The round (round.ts) writes each kind its own way, in one switch.
import type { AppliedPosting, BalanceBook } from './balances';
import type { EntryDraft } from './entry';
import type { FxQuoteRecord } from './fx-quotes';
import type { HoldRecord } from './holds';
import type { PartnerInstruction } from './messages';
import type { Metadata } from './metadata';
import type { Currency } from './money';
import { refused, type Outcome, type RefusalCode } from './outcome';
import type { PaymentRecord, PaymentStatus } from './payments';
import type { LateCompletionException, TransferRecord, TransferStatus } from './transfers';

export interface EventDraft {
  type: string;
  resourceType: 'transfer' | 'balance' | 'payment' | 'hold' | 'balance_alert';
  resourceId: string;
  accountId: string;
  status: string;
  amount: string | null;
  currency: Currency | null;
  attributes: Record<string, unknown> | null;
  /** The resource's metadata, carried by the event (DESIGN.md section 5h); absent for a resource that has none (a balance). */
  metadata?: Metadata;
}

export interface PostedEntry {
  entry: EntryDraft;
  postings: AppliedPosting[];
}

/** A record a decision creates (`isNew`) or changes, or a fact about one that the round keeps. */
export type RecordChange =
  | { kind: 'transfer'; transfer: TransferRecord; isNew: boolean }
  | { kind: 'transfer_transition'; transferId: string; from: TransferStatus | null; to: TransferStatus; at: Date }
  | { kind: 'payment'; payment: PaymentRecord; isNew: boolean }
  | { kind: 'payment_transition'; paymentId: string; from: PaymentStatus | null; to: PaymentStatus; at: Date }
  | { kind: 'hold'; hold: HoldRecord; isNew: boolean }
  /** A quote this command executed, with its consumed_at set. */
  | { kind: 'quote_consumed'; quote: FxQuoteRecord }
  /** A transfer completed after the ledger had failed it: the exception finance is to work. */
  | { kind: 'late_completion'; exception: LateCompletionException }
  /** What a partner dispatcher is to do: pay a transfer out, or return part of one. */
  | ({ kind: 'partner_instruction'; partner: string; accountId: string } & PartnerInstruction);

export type ChangeKind = RecordChange['kind'];
export type ChangeOf<K extends ChangeKind> = Extract<RecordChange, { kind: K }>;

export interface Decision {
  outcome: Outcome;
  entries: PostedEntry[];
  events: EventDraft[];
  changes: RecordChange[];
  /** A batch's transfers, each decided as transfer.create decides one (commands/transfer-batch.ts); the round writes each as its own. */
  parts?: Decision[];
}

export const emptyDecision = (outcome: Outcome): Decision => ({ outcome, entries: [], events: [], changes: [] });

export function refusal(code: RefusalCode, message: string, field: string | null = null): Decision {
  return emptyDecision(refused(code, message, field));
}

/** Applies an entry to the batch's balances and records it in the decision. */
export function post(decision: Decision, book: BalanceBook, entry: EntryDraft): void {
  decision.entries.push({ entry, postings: book.apply(entry) });
}
