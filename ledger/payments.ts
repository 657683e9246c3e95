// Payments through the partners, as the ledger records them (SPEC.md sections 2 and 3, Payment;
// DESIGN.md section 5c). Add funds brings money in from a customer's partner account; the
// ledger credits it only once the partner has settled.
import type { Metadata } from './metadata';
import type { Currency } from './money';

export const PAYMENT_STATUSES = ['pending', 'sent', 'authorized', 'completed', 'failed', 'cancelled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];
export const FINAL_PAYMENT_STATUSES: readonly PaymentStatus[] = ['completed', 'failed', 'cancelled'];

/** The order a payment moves in; a later status implies the earlier ones. */
const PROGRESS: readonly PaymentStatus[] = ['pending', 'sent', 'authorized', 'completed'];

export interface PaymentRecord {
  id: string;
  account_id: string;
  /** The command that created it (derived from the Idempotency-Key). */
  command_id: string;
  customer_id: string;
  partner: string;
  direction: 'inbound' | 'outbound';
  kind: 'add_funds' | 'send' | 'claimless';
  amount: string;
  currency: Currency;
  status: PaymentStatus;
  external_id: string | null;
  claim_link: string | null;
  idempotency_key: string;
  retry_count: number;
  /** Submissions to the partner by every caller; retry_count is this less one. */
  submissions: number;
  funding_method_external_id: string | null;
  /** Who an outbound payment pays (SPEC.md section 4, send), as the request gave it. */
  payee: Record<string, unknown> | null;
  purpose: string | null;
  /** The client's own values (DESIGN.md section 5h), set on create. */
  metadata: Metadata;
  failure_code: string | null;
  failure_message: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/**
 * The statuses a payment passes through to reach `to`: each skipped step of the progress
 * (a partner that answers `authorized` to a submission has also received it: `sent`), then `to`.
 */
export function pathTo(from: PaymentStatus, to: PaymentStatus): PaymentStatus[] {
  if (FINAL_PAYMENT_STATUSES.includes(from) || from === to) return [];
  const fromIndex = PROGRESS.indexOf(from);
  const toIndex = PROGRESS.indexOf(to);
  if (toIndex === -1) return [to]; // failed or cancelled: from wherever it is
  if (toIndex < fromIndex) return []; // an older answer arriving late
  return PROGRESS.slice(fromIndex + 1, toIndex + 1);
}

/**
 * The id of the command that tells the ledger a payment reached `status`. Whoever says it (the
 * request that submitted the payment, the settler, a sandbox simulation) names the same command,
 * so the ledger keeps the first and the others change nothing.
 */
export const paymentUpdateCommandId = (paymentId: string, status: PaymentStatus): string => `payment.update:${paymentId}:${status}`;

/**
 * The id of a command that only counts a caller's submissions that got no answer to record (a
 * request that ended 503, a settler's resubmission that failed): one per caller's attempt, named
 * by `attemptId`, so each is counted once.
 */
export const paymentSubmissionsCommandId = (paymentId: string, attemptId: string): string => `payment.update:${paymentId}:submissions:${attemptId}`;

/** What a partner says of a payment it holds: its id there, its status there, its claim link. */
export interface PartnerView { id: string; status: 'pending' | 'authorized' | 'completed' | 'reversed' | 'expired'; claim_link?: string }

/** What a partner's view says of a payment: the news a payment.update carries (commands/payment-update.ts). */
export interface PartnerNews { status: PaymentStatus; external_id: string | null; claim_link: string | null; failure_code: string | null; failure_message: string | null }

/**
 * What a partner's view means for a payment (its submission answer or a later poll): the update
 * to record, or null when it says nothing new. A payment the partner holds as `pending` has been
 * received there (`sent`); a reversal fails it; a claim link that expired cancels it.
 */
export function updateFromPartner(payment: PaymentRecord, seen: PartnerView): PartnerNews | null {
  const known = { external_id: seen.id, claim_link: seen.claim_link ?? null };
  switch (seen.status) {
    case 'reversed': return { ...known, status: 'failed', failure_code: 'partner_reversed', failure_message: 'the partner reversed the payment' };
    case 'expired': return { ...known, status: 'cancelled', failure_code: 'claim_expired', failure_message: 'the payee did not claim the payment in time' };
    case 'pending': return payment.status === 'pending' ? { ...known, status: 'sent', failure_code: null, failure_message: null } : null;
    default: return seen.status === payment.status ? null : { ...known, status: seen.status, failure_code: null, failure_message: null };
  }
}
