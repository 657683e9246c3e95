// Payments through the partners, as the ledger records them (SPEC.md sections 2 and 3, Payment;
// DESIGN.md section 5c). Add funds brings money in from a customer's partner account; the
// ledger credits it only once the partner has settled.
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
  funding_method_external_id: string | null;
  /** Who an outbound payment pays (SPEC.md section 4, send), as the request gave it. */
  payee: Record<string, unknown> | null;
  purpose: string | null;
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
