// One submitter of a payment at a time, and an end given to an unsent payment kept where every
// submitter reads it (src/partners/submission-lease.ts). A pending payment with no partner id is
// submitted by the request that created it, or later by the settler; each takes the lease
// (submission_lease, until submission_lease_until) before it calls the partner and gives it back
// after. One that ends the payment without the partner having made it (the partner declined it,
// its deadline passed with nothing there, the sandbox failed or cancelled it) writes that end
// (unsent_end: status, failure_code, failure_message) as it gives the lease back, before the ledger
// has recorded it: no one submits the payment again, and the settler tells the ledger the same end
// if its submitter could not. Written by the submitters, never by the ledger.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payments ADD COLUMN submission_lease uuid, ADD COLUMN submission_lease_until timestamptz, ADD COLUMN unsent_end jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payments DROP COLUMN submission_lease, DROP COLUMN submission_lease_until, DROP COLUMN unsent_end');
}
