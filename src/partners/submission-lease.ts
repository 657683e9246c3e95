// One submitter of a payment at a time (migrations/20261207090000_payment_submission_lease.ts).
// The request that created a payment submits it first; the settler takes over once the request's
// window has passed (PAYMENT_RESUBMIT_AFTER_MS). A window measured by the clock alone lets both
// call the partner at once when the request is slow: the request's submission declined, the
// settler's resubmission (without the sandbox scenario) paid, and the ledger, told of the decline
// first, fails a payment the partner made. The lease makes them take turns, and whoever ends a
// payment the partner never made writes that end as it gives the lease back, so no later submitter
// sends it again while the ledger has not recorded the end.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { log } from '../log';

/**
 * How long a submitter holds a payment: longer than a partner call with every retry (5 attempts of
 * 5 s, and their backoff). A submitter that died holding it delays the next by this much at most.
 */
export const SUBMISSION_LEASE_MS = 60_000;

/** A submission lease taken: its token, and the payment's last unreachable moment with the lease taken. */
export interface TakenSubmission {
  token: string;
  partnerUnreachableAt: Date | null;
}

/** How a submitter ended a payment the partner never made, before the ledger records it. */
export interface UnsentEnd {
  status: 'failed' | 'cancelled';
  failure_code: string;
  failure_message: string;
}

/**
 * Takes the payment for one submission: the lease's token, or null when another submitter holds
 * it, the payment is no longer pending without a partner id, or a submitter has ended it.
 *
 * A lease taken over from a submitter that went away without giving it back (its process was
 * killed during the partner call) marks the payment as one the partner could not be asked about
 * until that lease ran out (partner_unreachable_at): the pending deadline counts from then, as it
 * does after an outage, so a lease as long as the deadline cannot fail a payment no one submitted.
 */
export async function takeSubmission(db: Knex, paymentId: string, leaseMs = SUBMISSION_LEASE_MS): Promise<TakenSubmission | null> {
  const token = randomUUID();
  const { rows } = await db.raw<{ rows: Array<{ partner_unreachable_at: Date | null }> }>(`
    UPDATE payments SET submission_lease = ?, submission_lease_until = now() + make_interval(secs => ?::float8),
           partner_unreachable_at = CASE WHEN submission_lease IS NULL THEN partner_unreachable_at
                                         ELSE greatest(partner_unreachable_at, submission_lease_until) END
     WHERE id = ? AND status = 'pending' AND external_id IS NULL AND unsent_end IS NULL
       AND (submission_lease_until IS NULL OR submission_lease_until <= now())
    RETURNING partner_unreachable_at`, [token, leaseMs / 1000, paymentId]);
  return rows.length === 1 ? { token, partnerUnreachableAt: rows[0].partner_unreachable_at } : null;
}

/**
 * Gives the lease back, writing the end the submitter gave the payment, if any. False when the
 * lease was no longer this submitter's (it outlived it, and another may have submitted since):
 * its end is then not the last word on the payment, and is not written.
 */
export async function endSubmission(db: Knex, paymentId: string, lease: string, end: UnsentEnd | null = null): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(`
    UPDATE payments SET submission_lease = NULL, submission_lease_until = NULL, unsent_end = coalesce(?::jsonb, unsent_end)
     WHERE id = ? AND submission_lease = ? AND submission_lease_until > now()
    RETURNING id`, [end === null ? null : JSON.stringify(end), paymentId, lease]);
  return rows.length === 1;
}

/** Gives the lease back after a submission whose answer is recorded; not given back (the database is away), it runs out on its own. */
export async function giveBackSubmission(db: Knex, paymentId: string, lease: string): Promise<void> {
  await endSubmission(db, paymentId, lease).catch((error: unknown) => log.warn({ paymentId, err: (error as Error).message }, 'could not give back a payment\'s submission lease; it runs out on its own'));
}
