// What the ledger decided about a command, in its own terms: accepted, with the record it wrote,
// or refused, with a code, a message and the field at fault. The outcome travels on
// ledger.replies and is kept in processed_commands, so a redelivered command gets the same one;
// the HTTP layer alone turns it into a status and a body.
import type { FxQuoteRecord } from './fx-quotes';
import type { Currency } from './money';
import type { PaymentRecord } from './payments';
import type { TransferRecord } from './transfers';
import type { HoldRecord } from './holds';

/** Why the ledger refuses a command; the names are the API's error codes (SPEC.md section 7). */
export type RefusalCode =
  | 'resource_not_found' | 'account_not_active' | 'sender_no_chain_wallet' | 'recipient_not_found' | 'invalid_request'
  | 'phantom_recipient' | 'external_send_blocked' | 'insufficient_funds' | 'transfer_not_found' | 'unsupported_pair'
  | 'quote_not_found' | 'quote_expired' | 'quote_already_consumed' | 'payment_not_found'
  | 'faucet_limit_exceeded' | 'account_no_chain_wallet' | 'wallet_not_found' | 'hold_not_found' | 'hold_not_active' | 'hold_exceeded'
  | 'transfer_not_reversible' | 'reversal_exceeded'
  // Not a decision on the command: its Idempotency-Key already names another request (never stored).
  | 'idempotency_conflict';

export interface Refused { kind: 'refused'; code: RefusalCode; message: string; field: string | null }

/** A transfer created by the command (`created`), or the state of one it found. */
export interface TransferOutcome { kind: 'transfer'; created: boolean; transfer: TransferRecord }

export interface FaucetCredited {
  kind: 'faucet_credit';
  entry_id: string; account_id: string; currency: Currency; amount: string;
  /** The account's balance in `currency` after the credit. */
  available: string; pending: string;
}

/** A persisted quote executed: the quote, consumed, and the entry with the account's two transactions. */
export interface FxExecuted {
  kind: 'fx_execution';
  quote: FxQuoteRecord;
  entry_id: string;
  /** The postings on the account's available balances (the transactions of GET /v1/transactions). */
  debit_transaction_id: string;
  credit_transaction_id: string;
}

/** A payment recorded by the command (`created`), or its state after an update. */
export interface PaymentOutcome { kind: 'payment'; created: boolean; payment: PaymentRecord }

/** A reconciliation exception adjusted: the entry posted between settlement and suspense. */
export interface ReconciliationAdjusted { kind: 'reconciliation_adjustment'; entry_id: string; partner: string; currency: Currency; amount: string }

/** Money moved between the main balance and wallets (DESIGN.md section 5g). */
export interface WalletTransferred {
  kind: 'wallet_transfer';
  wallet_transfer: {
    id: string; account_id: string; from_wallet_id: string; to_wallet_id: string; amount: string; currency: Currency;
    description: string | null; status: 'completed'; created_at: string;
  };
}

/** A hold created by the command (`created`), or its state after a capture, a void or an expiry. */
export interface HoldOutcome { kind: 'hold'; created: boolean; hold: HoldRecord }

/**
 * One transfer of a batch as decided: `created` (its transfer written), `refused` (why in `error`),
 * or `not_created` (an atomic batch in which another item was refused).
 */
export interface BatchItem {
  index: number; status: 'created' | 'refused' | 'not_created'; transfer_id: string;
  error: { code: RefusalCode; message: string; field: string | null } | null;
}

/** A transfer batch decided (DESIGN.md section 5g): every item's outcome, in the order sent. */
export interface TransferBatchOutcome {
  kind: 'transfer_batch';
  batch: { id: string; account_id: string; atomic: boolean; status: 'completed' | 'failed' | 'partial'; items: BatchItem[]; created_at: string };
}

export type Outcome = Refused | TransferOutcome | FaucetCredited | FxExecuted | PaymentOutcome | ReconciliationAdjusted | WalletTransferred | HoldOutcome | TransferBatchOutcome;

export const refused = (code: RefusalCode, message: string, field: string | null = null): Refused => ({ kind: 'refused', code, message, field });

/**
 * The refusal of a request under an Idempotency-Key that another request owns (another body, or
 * another route of the account): one wording wherever it is decided, by the ledger or the API.
 */
export const KEY_CONFLICT: Refused = refused('idempotency_conflict', 'this Idempotency-Key was already used with a different request', 'Idempotency-Key');

const dateOrNull = (text: unknown): Date | null => (text ? new Date(text as string) : null);

/**
 * An outcome from its JSON text, with the records' timestamps as dates again. A transfer decided
 * before transfers had payouts paid out its own amount in its own currency; one decided before
 * transfers named their wallet came from the main balance; a record decided before records had
 * metadata has none.
 */
export function parseOutcome(text: string): Outcome {
  const outcome = JSON.parse(text) as Outcome;
  if (outcome.kind === 'transfer') {
    const transfer = outcome.transfer as unknown as Record<string, unknown>;
    outcome.transfer = {
      ...outcome.transfer, from_wallet_id: (transfer.from_wallet_id ?? null) as string | null,
      payout_amount: String(transfer.payout_amount ?? transfer.amount), payout_currency: (transfer.payout_currency ?? transfer.currency) as Currency,
      fx_rate: (transfer.fx_rate ?? null) as string | null, fx_mid_rate: (transfer.fx_mid_rate ?? null) as string | null, fx_spread: (transfer.fx_spread ?? null) as string | null,
      created_at: new Date(transfer.created_at as string), updated_at: new Date(transfer.updated_at as string), completed_at: dateOrNull(transfer.completed_at),
      metadata: outcome.transfer.metadata ?? {},
    };
  }
  if (outcome.kind === 'payment') {
    const payment = outcome.payment as unknown as Record<string, unknown>;
    outcome.payment = {
      ...outcome.payment,
      created_at: new Date(payment.created_at as string), updated_at: new Date(payment.updated_at as string), completed_at: dateOrNull(payment.completed_at),
      metadata: outcome.payment.metadata ?? {},
    };
  }
  if (outcome.kind === 'hold') {
    const hold = outcome.hold as unknown as Record<string, unknown>;
    outcome.hold = {
      ...outcome.hold,
      expires_at: new Date(hold.expires_at as string), created_at: new Date(hold.created_at as string), updated_at: new Date(hold.updated_at as string),
      metadata: outcome.hold.metadata ?? {},
    };
  }
  if (outcome.kind === 'fx_execution') {
    const quote = outcome.quote as unknown as Record<string, unknown>;
    outcome.quote = {
      ...outcome.quote,
      created_at: new Date(quote.created_at as string), expires_at: new Date(quote.expires_at as string), consumed_at: dateOrNull(quote.consumed_at),
    };
  }
  return outcome;
}
