// One submitter of a payment at a time (migrations/20261207090000_payment_submission_lease.ts).
// The request that created a payment submits it first; the settler takes over once the request's
// window has passed (PAYMENT_RESUBMIT_AFTER_MS). A window measured by the clock alone lets both
// call the partner at once when the request is slow: the request's submission declined, the
// settler's resubmission (without the sandbox scenario) paid, and the ledger, told of the decline
// first, fails a payment the partner made. The lease makes the two take turns, and a decline is
// written down as the lease is given back, so no later submitter sends what the partner refused.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { log } from '../log';

/**
 * How long a submitter holds a payment: longer than a partner call with every retry (5 attempts of
 * 5 s, and their backoff). A submitter that died holding it delays the next by this much at most.
 */
export const SUBMISSION_LEASE_MS = 60_000;

/**
 * Takes the payment for one submission: the lease's token, or null when another submitter holds
 * it, the payment is no longer pending without a partner id, or a decline of it is on record.
 */
export async function takeSubmission(db: Knex, paymentId: string, leaseMs = SUBMISSION_LEASE_MS): Promise<string | null> {
  const lease = randomUUID();
  const { rows } = await db.raw<{ rows: unknown[] }>(`
    UPDATE payments SET submission_lease = ?, submission_lease_until = now() + make_interval(secs => ?::float8)
     WHERE id = ? AND status = 'pending' AND external_id IS NULL AND partner_declined IS NULL
       AND (submission_lease_until IS NULL OR submission_lease_until <= now())
    RETURNING id`, [lease, leaseMs / 1000, paymentId]);
  return rows.length === 1 ? lease : null;
}

/**
 * Gives the lease back, writing the partner's decline when it declined. False when the lease was
 * no longer this submitter's (it outlived it, and another may have submitted since): a decline is
 * then not the last word on the payment and is not recorded.
 */
export async function endSubmission(db: Knex, paymentId: string, lease: string, declined: string | null = null): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(`
    UPDATE payments SET submission_lease = NULL, submission_lease_until = NULL, partner_declined = coalesce(?, partner_declined)
     WHERE id = ? AND submission_lease = ? AND submission_lease_until > now()
    RETURNING id`, [declined, paymentId, lease]);
  return rows.length === 1;
}

/** Gives the lease back after a submission whose answer is recorded; not given back (the database is away), it runs out on its own. */
export async function giveBackSubmission(db: Knex, paymentId: string, lease: string): Promise<void> {
  await endSubmission(db, paymentId, lease).catch((error: unknown) => log.warn({ paymentId, err: (error as Error).message }, 'could not give back a payment\'s submission lease; it runs out on its own'));
}
