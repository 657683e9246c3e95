// The messages that cross the Kafka backbone around the ledger. Commands and partner
// instructions carry their specific fields as a JSON payload (schemas/*.avsc document the
// envelopes); these types are that payload's shape.
import type { Metadata, MetadataPatch } from './metadata';
import type { Currency } from './money';

export const COMMAND_TYPES = ['faucet.credit', 'transfer.create', 'transfer.partner_result', 'fx.execute', 'payment.create', 'payment.update', 'reconciliation.adjust', 'wallet.transfer', 'hold.create', 'hold.capture', 'hold.void', 'hold.expire', 'transfer.batch', 'transfer.reverse', 'transfer.update', 'hold.update', 'transfer.return_result'] as const;
export type CommandType = (typeof COMMAND_TYPES)[number];

/** Envelope on ledger.commands (schemas/ledger.commands.v3.avsc). */
export interface LedgerCommandEnvelope {
  id: string;
  type: CommandType;
  account_id: string;
  reply_to: string | null;
  issued_at: string;
  payload: string;
  /**
   * For a command whose processed record is its Idempotency-Key's record (DESIGN.md section 5f):
   * the key, and the fingerprint of the request that sent it. Null for the others.
   */
  idempotency_key?: string | null;
  fingerprint?: string | null;
  /** Names the request waiting on this message; its reply carries it back. */
  request_id?: string | null;
}

export interface FaucetCredit {
  entry_id: string;
  currency: Currency;
  amount: string;
}

export interface InternalRecipient {
  email: string;
}

export interface BankRecipient {
  email: string;
  name: string;
  bank: { country: string; bank_name: string; account_number: string; routing_number?: string; currency: string };
}

export interface TransferCreate {
  transfer_id: string;
  type: 'internal' | 'external';
  amount: string;
  currency: Currency;
  recipient_email?: string;
  recipient?: BankRecipient;
  note: string | null;
  /** The client's own values (DESIGN.md section 5h); absent in a command sent before transfers had them: none. */
  metadata?: Metadata;
  /** The sender's wallet the money comes out of (DESIGN.md section 5g); absent or null: the main balance. */
  from_wallet_id?: string | null;
  /** A sandbox failure the client asked the rail to act out (Sandbox-Scenario header); absent: none. */
  scenario?: string | null;
}

/** Most transfers one batch carries (DESIGN.md section 5g). */
export const BATCH_ITEMS_MAX = 1000;

/**
 * Many transfers in one command (DESIGN.md section 5g), each of the shape of transfer.create,
 * decided in order in one round: `atomic` all or none, else each alone. The batch's id is its
 * command's id, so its record is the command's (processed_commands).
 */
export interface TransferBatch {
  atomic: boolean;
  items: TransferCreate[];
}

/** Executes a persisted FX quote of the commanding account (DESIGN.md section 5b). */
export interface FxExecute {
  quote_id: string;
  entry_id: string;
}

/** Records a payment the API is about to submit to a partner (DESIGN.md section 5c). */
export interface PaymentCreate {
  payment_id: string;
  customer_id: string;
  partner: string;
  /** add_funds brings money in; send and claimless pay it out, held first. */
  kind: 'add_funds' | 'send' | 'claimless';
  amount: string;
  currency: Currency;
  idempotency_key: string;
  funding_method_external_id: string | null;
  payee?: Record<string, unknown> | null;
  purpose?: string | null;
  /** The client's own values; absent: none. */
  metadata?: Metadata;
}

/**
 * Finance resolves a reconciliation exception by adjusting (DESIGN.md section 5e): the ledger
 * moves `amount` (the difference statement − ledger, signed as the partner sees it) between the
 * partner's settlement account and the suspense account. The entry id is derived from the
 * exception, so the exception is adjusted once however often this is sent.
 */
export interface ReconciliationAdjust {
  exception_id: string;
  entry_id: string;
  partner: string;
  currency: Currency;
  amount: string;
}

/**
 * Moves money between the main balance ("main") and the account's wallets, or to another
 * account's wallet by id (DESIGN.md section 5g). The id is the wallet transfer's and its entry's.
 */
export interface WalletTransfer {
  wallet_transfer_id: string;
  from_wallet_id: string;
  to_wallet_id: string;
  amount: string;
  currency: Currency;
  description: string | null;
}

/** Moves `amount` from the main balance's or a wallet's available to held until `expires_at` (DESIGN.md section 5g). */
export interface HoldCreate {
  hold_id: string;
  amount: string;
  currency: Currency;
  /** Null: the main balance. */
  wallet_id: string | null;
  expires_at: string;
  description: string | null;
  /** The client's own values; absent: none. */
  metadata?: Metadata;
}

/**
 * Pays `amount` of a hold to a recipient as POST /v1/transfers would: `recipient_email` (internal)
 * or `recipient` with bank details (external, paid in the hold's currency); `final` releases the rest.
 */
export interface HoldCaptureCommand {
  hold_id: string;
  capture_id: string;
  transfer_id: string;
  amount: string;
  final: boolean;
  recipient_email?: string;
  recipient?: BankRecipient;
  note: string | null;
}

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

/**
 * Changes the metadata of a transfer of the commanding account, or of one of its reversals
 * (`reversal_id`), by a patch (DESIGN.md section 5h): decided on the locked record, so two changes
 * of one transfer apply one after the other and neither loses the other's keys.
 */
export interface TransferUpdate {
  transfer_id: string;
  reversal_id: string | null;
  metadata: MetadataPatch;
}

/** Changes the metadata of a hold of the commanding account by a patch, as transfer.update a transfer's. */
export interface HoldUpdate {
  hold_id: string;
  metadata: MetadataPatch;
}

/** Releases what is left of a hold: `hold.void` from its owner, `hold.expire` from the ledger's own expiry sweep. */
export interface HoldRelease {
  hold_id: string;
}

/** What the partner said of a payment (its submission answer, a later poll, a sandbox simulation). */
export interface PaymentUpdate {
  payment_id: string;
  /** `pending`: no news of the payment, only `submissions` to count. */
  status: 'pending' | 'sent' | 'authorized' | 'completed' | 'failed' | 'cancelled';
  external_id: string | null;
  claim_link: string | null;
  failure_code: string | null;
  failure_message: string | null;
  /** Resubmissions to the partner so far, as the caller knew them. */
  retry_count: number;
  /** Submissions this caller made to the partner (absent: none); the ledger adds them to the payment's, once per command. */
  submissions?: number;
}

/** A partner's final word on a transfer, fed back to the ledger by a partner dispatcher. */
export interface TransferPartnerResult {
  transfer_id: string;
  outcome: 'completed' | 'failed' | 'rolled_back';
  partner_payment_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
}

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

/**
 * The Kafka header on a reply naming the API process it is for (the envelope's reply_to): each
 * API process reads every reply and skips the others' without decoding them.
 */
export const REPLY_TO_HEADER = 'reply-to';

/** Envelope on ledger.replies (schemas/ledger.replies.v3.avsc). */
export interface LedgerReplyEnvelope {
  command_id: string;
  reply_to: string | null;
  /** The outcome's JSON text (outcome.ts). */
  outcome: string;
  /** The request_id of the command message answered; null in a reply written before it existed. */
  request_id?: string | null;
  /** The command had been decided before this message arrived: the outcome is the stored one. */
  replayed?: boolean;
}

/** Envelope on partner.commands (schemas/partner.commands.v1.avsc). */
export interface PartnerCommandEnvelope {
  id: string;
  type: PartnerInstruction['type'];
  partner: string;
  resource_id: string;
  account_id: string;
  issued_at: string;
  payload: string;
}

/** Payload of a transfer.execute partner command. */
export interface TransferExecute {
  transfer_id: string;
  amount: string;
  currency: Currency;
  beneficiary: Record<string, unknown>;
  /** How many times this instruction was re-queued because the partner had no final answer yet. */
  attempt: number;
  /** The sandbox scenario of the transfer, passed on to the rail; absent: none. */
  scenario?: string | null;
}

/**
 * Payload of a transfer.return partner command: the partner is asked to return `amount` of the
 * payment `payment_id` it made for the transfer, under the reversal's id as reference.
 */
export interface TransferReturn {
  transfer_id: string;
  reversal_id: string;
  /** The partner's id of the transfer's payment. */
  payment_id: string;
  /** The recipient's part, in the payout currency, at its scale. */
  amount: string;
  currency: Currency;
  /** How many times this instruction was re-queued because the partner had no final answer yet. */
  attempt: number;
  scenario?: string | null;
}

/** What the ledger asks a partner dispatcher to do: pay a transfer out, or return part of one. */
export type PartnerInstruction = { type: 'transfer.execute'; payload: TransferExecute } | { type: 'transfer.return'; payload: TransferReturn };

/**
 * The partner command of an instruction. Its id names the instruction's resource (the transfer, or
 * a return's reversal) and attempt, so a copy of it is known as one; it is keyed by that resource.
 */
export function partnerEnvelope(partner: string, accountId: string, instruction: PartnerInstruction, now: Date): PartnerCommandEnvelope {
  const [verb, resourceId] = instruction.type === 'transfer.execute' ? ['execute', instruction.payload.transfer_id] : ['return', instruction.payload.reversal_id];
  return {
    id: `${verb}:${resourceId}:${instruction.payload.attempt}`, type: instruction.type, partner, resource_id: resourceId,
    account_id: accountId, issued_at: now.toISOString(), payload: JSON.stringify(instruction.payload),
  };
}

/** The event envelope of SPEC.md section 6 (schemas/domain.events.v7.avsc). */
export interface DomainEventEnvelope {
  id: string;
  type: string;
  created_at: string;
  environment: string;
  resource_type: string;
  resource_id: string;
  /** Null for an operator event (reconciliation.completed), which belongs to no account. */
  account_id: string | null;
  /** The event's number in its account's sequence: 1, 2, 3, ... gapless, in commit order (0 outside any account's). */
  account_seq: number;
  /**
   * `metadata`: the client's own values of the resource (a transfer's, a hold's, a payment's); null
   * or absent for a resource that has none (a balance) and in events written before metadata existed.
   */
  data: { id: string; status: string; amount: string | null; currency: string | null; attributes: string | null; metadata?: Metadata | null };
}
