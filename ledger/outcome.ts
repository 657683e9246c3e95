// What the ledger decided about a command, in its own terms: accepted, with what an answer shows
// of the record it wrote (a view of its own: the fields the API's answers read, not the table's
// row), or refused, with a code, a message and the field at fault. The outcome travels on
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

/** What an answer shows of a transfer: the API's transfer and reversal views read these alone. */
export type TransferShown = Pick<TransferRecord,
  | 'id' | 'type' | 'status' | 'amount' | 'currency' | 'payout_amount' | 'payout_currency' | 'fx_rate' | 'fx_mid_rate' | 'fx_spread'
  | 'recipient' | 'note' | 'metadata' | 'estimated_arrival' | 'partner_payment_id' | 'failure_code' | 'failure_message'
  | 'late_completion' | 'reversed_amount' | 'reversals' | 'created_at' | 'updated_at' | 'completed_at'>;

export const transferShown = (t: TransferShown): TransferShown => ({
  id: t.id, type: t.type, status: t.status, amount: t.amount, currency: t.currency, payout_amount: t.payout_amount, payout_currency: t.payout_currency,
  fx_rate: t.fx_rate, fx_mid_rate: t.fx_mid_rate, fx_spread: t.fx_spread, recipient: t.recipient, note: t.note, metadata: t.metadata,
  estimated_arrival: t.estimated_arrival, partner_payment_id: t.partner_payment_id, failure_code: t.failure_code, failure_message: t.failure_message,
  late_completion: t.late_completion ?? null, reversed_amount: t.reversed_amount, reversals: t.reversals, created_at: t.created_at, updated_at: t.updated_at, completed_at: t.completed_at,
});

/** A transfer created by the command (`created`), or the state of one it found. */
export interface TransferOutcome { kind: 'transfer'; created: boolean; transfer: TransferShown }

/** The record itself while the round decides (a later step of the same command may change it); shown() narrows it as the round keeps the outcome. */
export const transferOutcome = (transfer: TransferRecord, created: boolean): TransferOutcome => ({ kind: 'transfer', created, transfer });

export interface FaucetCredited {
  kind: 'faucet_credit';
  entry_id: string; account_id: string; currency: Currency; amount: string;
  /** The account's balance in `currency` after the credit. */
  available: string; pending: string;
}

/** What an answer shows of a quote: the API's quote view reads these alone. */
export type QuoteShown = Omit<FxQuoteRecord, 'account_id'>;

export const quoteShown = (q: QuoteShown): QuoteShown => ({
  id: q.id, from_currency: q.from_currency, to_currency: q.to_currency, from_amount: q.from_amount, to_amount: q.to_amount, rate: q.rate, mid_rate: q.mid_rate,
  spread: q.spread, created_at: q.created_at, expires_at: q.expires_at, consumed_at: q.consumed_at,
});

/** A persisted quote executed: the quote, consumed, and the entry with the account's two transactions. */
export interface FxExecuted {
  kind: 'fx_execution';
  quote: QuoteShown;
  entry_id: string;
  /** The postings on the account's available balances (the transactions of GET /v1/transactions). */
  debit_transaction_id: string;
  credit_transaction_id: string;
}

/** What an answer shows of a payment: the API's payment view reads these alone. */
export type PaymentShown = Pick<PaymentRecord,
  | 'id' | 'partner' | 'direction' | 'kind' | 'amount' | 'currency' | 'status' | 'external_id' | 'claim_link' | 'idempotency_key' | 'retry_count'
  | 'customer_id' | 'funding_method_external_id' | 'purpose' | 'payee' | 'metadata' | 'failure_code' | 'failure_message' | 'created_at' | 'completed_at'>;

export const paymentShown = (p: PaymentShown): PaymentShown => ({
  id: p.id, partner: p.partner, direction: p.direction, kind: p.kind, amount: p.amount, currency: p.currency, status: p.status, external_id: p.external_id,
  claim_link: p.claim_link, idempotency_key: p.idempotency_key, retry_count: p.retry_count, customer_id: p.customer_id,
  funding_method_external_id: p.funding_method_external_id, purpose: p.purpose, payee: p.payee, metadata: p.metadata,
  failure_code: p.failure_code, failure_message: p.failure_message, created_at: p.created_at, completed_at: p.completed_at,
});

/** A payment recorded by the command (`created`), or its state after an update. */
export interface PaymentOutcome { kind: 'payment'; created: boolean; payment: PaymentShown }

export const paymentOutcome = (payment: PaymentRecord, created: boolean): PaymentOutcome => ({ kind: 'payment', created, payment });

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

/** What an answer shows of a hold: the API's hold view reads these alone. */
export type HoldShown = Pick<HoldRecord,
  | 'id' | 'status' | 'amount' | 'currency' | 'captured_amount' | 'released_amount' | 'wallet_id' | 'description' | 'metadata' | 'captures'
  | 'expires_at' | 'created_at' | 'updated_at'>;

export const holdShown = (h: HoldShown): HoldShown => ({
  id: h.id, status: h.status, amount: h.amount, currency: h.currency, captured_amount: h.captured_amount, released_amount: h.released_amount,
  wallet_id: h.wallet_id, description: h.description, metadata: h.metadata, captures: h.captures, expires_at: h.expires_at, created_at: h.created_at, updated_at: h.updated_at,
});

/** A hold created by the command (`created`), or its state after a capture, a void or an expiry. */
export interface HoldOutcome { kind: 'hold'; created: boolean; hold: HoldShown }

export const holdOutcome = (hold: HoldRecord, created: boolean): HoldOutcome => ({ kind: 'hold', created, hold });

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

/**
 * The outcome as the round keeps and answers it: each record it names narrowed to what an answer
 * shows (a decision may hold the whole record, the type allows more: JSON would carry it all).
 */
export function shown(outcome: Outcome): Outcome {
  switch (outcome.kind) {
    case 'transfer': return { ...outcome, transfer: transferShown(outcome.transfer) };
    case 'payment': return { ...outcome, payment: paymentShown(outcome.payment) };
    case 'hold': return { ...outcome, hold: holdShown(outcome.hold) };
    case 'fx_execution': return { ...outcome, quote: quoteShown(outcome.quote) };
    default: return outcome;
  }
}

const dateOrNull = (text: unknown): Date | null => (text ? new Date(text as string) : null);
const dateOf = (text: unknown): Date => new Date(text as string);

/**
 * An outcome from its JSON text, with its timestamps as dates again.
 * Outcomes are kept in processed_commands and replayed to a request sent again under its key, with
 * no end in time: an outcome stored before this view was a whole table row (a superset: read as it
 * is). One stored before transfers had payouts has no payout or rate: its transfer paid out its own
 * amount in its own currency, so those are filled in here. The other shims (a transfer's wallet,
 * a record's metadata) went: the view shows no wallet, and metadataOf reads an absent one as {}.
 */
export function parseOutcome(text: string): Outcome {
  const outcome = JSON.parse(text) as Outcome;
  switch (outcome.kind) {
    case 'transfer': {
      const t = outcome.transfer;
      outcome.transfer = {
        ...t, payout_amount: t.payout_amount ?? t.amount, payout_currency: t.payout_currency ?? t.currency,
        fx_rate: t.fx_rate ?? null, fx_mid_rate: t.fx_mid_rate ?? null, fx_spread: t.fx_spread ?? null,
        created_at: dateOf(t.created_at), updated_at: dateOf(t.updated_at), completed_at: dateOrNull(t.completed_at),
      };
      break;
    }
    case 'payment':
      outcome.payment = { ...outcome.payment, created_at: dateOf(outcome.payment.created_at), completed_at: dateOrNull(outcome.payment.completed_at) };
      break;
    case 'hold': {
      const h = outcome.hold;
      outcome.hold = { ...h, expires_at: dateOf(h.expires_at), created_at: dateOf(h.created_at), updated_at: dateOf(h.updated_at) };
      break;
    }
    case 'fx_execution': {
      const q = outcome.quote;
      outcome.quote = { ...q, created_at: dateOf(q.created_at), expires_at: dateOf(q.expires_at), consumed_at: dateOrNull(q.consumed_at) };
      break;
    }
  }
  return outcome;
}
