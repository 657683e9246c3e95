// Transfers as the ledger records them (SPEC.md sections 2 and 3).
import type { Metadata } from './metadata';
import { STABLECOINS, type Currency } from './money';

export const TRANSFER_STATUSES = ['pending', 'quoting', 'executing', 'completed', 'failed', 'rolled_back'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];
export const TERMINAL_STATUSES: readonly TransferStatus[] = ['completed', 'failed', 'rolled_back'];

/** `book` transfers never leave this ledger; the others run on a partner rail. */
export type Rail = 'book' | 'fiat' | 'chain';

export interface TransferRecord {
  id: string;
  account_id: string;
  /** The sender's wallet the money came from (a capture of a hold on it); null: the main balance. A failed payout goes back there. */
  from_wallet_id: string | null;
  command_id: string;
  type: 'internal' | 'external';
  status: TransferStatus;
  amount: string;
  currency: Currency;
  /** What the recipient receives: the amount itself, or across currencies its conversion at `fx_rate`. */
  payout_amount: string;
  payout_currency: Currency;
  /** The price fixed while the transfer was `quoting`; null when no conversion is needed. */
  fx_rate: string | null;
  fx_mid_rate: string | null;
  fx_spread: string | null;
  recipient_account_id: string | null;
  recipient: Record<string, unknown>;
  note: string | null;
  /** The client's own values (DESIGN.md section 5h): set on create, changed by transfer.update. */
  metadata: Metadata;
  partner: Rail;
  partner_payment_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
  estimated_arrival: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  /** Set when a partner paid the transfer after the ledger had failed it (commands/transfer-partner-result.ts decideLateCompletion). */
  late_completion?: LateCompletion | null;
  /** What its reversals give back to the sender, pending ones included and failed ones not, never more than `amount` (absent: none yet). */
  reversed_amount?: string;
  /** Its reversals, in the order they were decided (DESIGN.md section 5h). */
  reversals?: TransferReversal[];
}

/**
 * A reversal of a transfer, as the transfer's record keeps it. A book transfer's completes in the
 * entry that makes it; one paid through a partner is a return the partner makes, `pending` until
 * it answers (ledger/returns.ts).
 */
export interface TransferReversal {
  id: string;
  amount: string;
  reason: string | null;
  status: ReversalStatus;
  created_at: string;
  /** The client's own values; absent on a reversal decided before reversals had them. */
  metadata?: Metadata;
  /** A return: what the recipient gives back, in the payout currency (held from its available while pending). */
  payout_amount?: string;
  /** A return of a conversion: what the FX desk's spread gives back, in the payout currency. */
  spread_amount?: string;
  /** A return: the partner's id of it, once it answered. */
  partner_return_id?: string | null;
  failure_code?: string | null;
  failure_message?: string | null;
}

export const REVERSAL_STATUSES = ['pending', 'completed', 'failed'] as const;
export type ReversalStatus = (typeof REVERSAL_STATUSES)[number];

export interface LateCompletion {
  /** The failure the partner's payment overturned. */
  failure_code: string | null;
  failure_message: string | null;
  failed_at: string;
  /** What the sender's available balance did not cover, owed through the late-completion receivable. */
  receivable: string;
}

/**
 * What finance is told of a late completion: the ledger opens a `late_completion` exception in
 * the reconciliation exceptions queue from it, in the round that completes the transfer
 * (store/round-write.ts). Amounts are in the transfer's currency, at its scale.
 */
export interface LateCompletionException {
  transferId: string;
  partner: string;
  currency: Currency;
  /** The transfer's amount: what the partner paid, as the sender was to send it. */
  amount: string;
  /** Held again from the sender's available balance. */
  reheld: string;
  /** What the balance did not cover, owed through sys:receivable:late_completion:<currency>. */
  receivable: string;
  /** The entry that held the amount again (transfer_rehold). */
  entryId: string;
  partnerPaymentId: string | null;
  overturned: LateCompletion;
}

/**
 * Sandbox routing (SPEC.md section 1): stablecoins move on the chain rail; fiat to a bank
 * account goes through the fiat rail; fiat between two users of this service is a book transfer.
 */
export function railFor(type: 'internal' | 'external', currency: Currency): Rail {
  if (STABLECOINS.includes(currency)) return 'chain';
  return type === 'internal' ? 'book' : 'fiat';
}

export const ESTIMATED_ARRIVAL: Record<Rail, string> = {
  book: 'instant',
  fiat: 'within a minute',
  chain: 'a few seconds, after one block confirmation',
};

