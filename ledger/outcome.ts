// What the ledger decided about a command, in its own terms: accepted, with the record it wrote,
// or refused, with a code, a message and the field at fault. The outcome travels on
// ledger.replies and is kept in processed_commands, so a redelivered command gets the same one;
// the HTTP layer alone turns it into a status and a body.
import type { Currency } from './money';
import type { TransferRecord } from './transfers';

/** Why the ledger refuses a command; the names are the API's error codes (SPEC.md section 7). */
export type RefusalCode =
  | 'resource_not_found' | 'account_not_active' | 'sender_no_chain_wallet' | 'recipient_not_found' | 'invalid_request'
  | 'phantom_recipient' | 'external_send_blocked' | 'insufficient_funds' | 'transfer_not_found';

export interface Refused { kind: 'refused'; code: RefusalCode; message: string; field: string | null }

/** A transfer created by the command (`created`), or the state of one it found. */
export interface TransferOutcome { kind: 'transfer'; created: boolean; transfer: TransferRecord }

export interface FaucetCredited {
  kind: 'faucet_credit';
  entry_id: string; account_id: string; currency: Currency; amount: string;
  /** The account's balance in `currency` after the credit. */
  available: string; pending: string;
}

export type Outcome = Refused | TransferOutcome | FaucetCredited;

export const refused = (code: RefusalCode, message: string, field: string | null = null): Refused => ({ kind: 'refused', code, message, field });

/** An outcome from its JSON text, with the transfer record's timestamps as dates again. */
export function parseOutcome(text: string): Outcome {
  const outcome = JSON.parse(text) as Outcome;
  if (outcome.kind === 'transfer') {
    const transfer = outcome.transfer as unknown as Record<string, string | null>;
    outcome.transfer.created_at = new Date(transfer.created_at!);
    outcome.transfer.updated_at = new Date(transfer.updated_at!);
    outcome.transfer.completed_at = transfer.completed_at ? new Date(transfer.completed_at) : null;
  }
  return outcome;
}
