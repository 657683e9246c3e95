// One submitter of a payment at a time, and a partner's refusal kept where every submitter reads it
// (src/partners/submission-lease.ts). A pending payment with no partner id is submitted by the
// request that created it, or later by the settler; each takes the lease (submission_lease, until
// submission_lease_until) before it calls the partner and gives it back after. A submitter the
// partner declined writes the refusal (partner_declined) as it gives the lease back, before the
// ledger has recorded the payment failed: a later submitter finds it and fails the payment in turn,
// instead of submitting again a payment the partner refused. Written by the submitters, never by
// the ledger.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payments ADD COLUMN submission_lease uuid, ADD COLUMN submission_lease_until timestamptz, ADD COLUMN partner_declined text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payments DROP COLUMN submission_lease, DROP COLUMN submission_lease_until, DROP COLUMN partner_declined');
}
