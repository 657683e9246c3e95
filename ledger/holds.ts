// Holds as the ledger records them (DESIGN.md section 5g): authorize now, capture or void later.
// `amount` was moved from available to held when the hold was created; what is captured leaves
// held for the recipients, what is released (void, expiry, a final capture's rest) goes back to
// available. captured_amount + released_amount never exceeds amount (Postgres checks it too), and
// a hold is active exactly while some of it is left.
import type { Metadata } from './metadata';
import type { Currency } from './money';

export const HOLD_STATUSES = ['active', 'captured', 'voided', 'expired'] as const;
export type HoldStatus = (typeof HOLD_STATUSES)[number];

/**
 * A hold's status at `now`: an active hold is expired from its `expires_at` on, whether or not the
 * ledger's expiry (consumers/ledger/hold-expiry.ts, the same rule in SQL: expires_at <= now) has
 * released it yet. The one rule of a hold's life in time, as quoteStatus is a quote's.
 */
export function holdStatus(hold: Pick<HoldRecord, 'status' | 'expires_at'>, now: Date): HoldStatus {
  return hold.status === 'active' && hold.expires_at.getTime() <= now.getTime() ? 'expired' : hold.status;
}

export interface HoldCapture {
  id: string;
  amount: string;
  transfer_id: string;
  recipient_email: string;
  final: boolean;
  created_at: string;
}

export interface HoldRecord {
  id: string;
  account_id: string;
  /** Null: the main balance. */
  wallet_id: string | null;
  command_id: string;
  status: HoldStatus;
  currency: Currency;
  amount: string;
  captured_amount: string;
  released_amount: string;
  description: string | null;
  /** The client's own values (DESIGN.md section 5h): set on create, changed by hold.update. */
  metadata: Metadata;
  captures: HoldCapture[];
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** How long a hold lasts when its request names no expires_at: 7 days. */
export const HOLD_LIFETIME_DEFAULT_MS = 7 * 24 * 60 * 60 * 1000;
/** The longest a hold may last: 30 days. */
export const HOLD_LIFETIME_MAX_MS = 30 * 24 * 60 * 60 * 1000;
