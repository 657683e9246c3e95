// The envelopes that cross the Kafka backbone around the ledger (schemas/*.avsc document them):
// commands and their replies, partner instructions, domain events. A command carries its own
// fields as a JSON payload whose type lives in its command's module (ledger/commands/<command>.ts);
// a partner instruction's payload types are here, since no ledger command owns them.
import type { Metadata } from './metadata';
import type { Currency } from './money';

/** Envelope on ledger.commands (schemas/ledger.commands.v3.avsc). */
export interface LedgerCommandEnvelope {
  id: string;
  /** The command's kind: a row of the ledger's table (ledger/commands/index.ts) when it is one; a message read from Kafka may carry any text. */
  type: string;
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
