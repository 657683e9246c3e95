// How many times a payment was submitted to its partner, by every caller (the request that made
// it, the client's retries of a 503, the settler's resubmissions), each counted once by the
// ledger: `retry_count` is this less one. A request that ended 503 had its submissions lost
// before, as it recorded nothing. Payments made before count one submission when the partner
// answered with a reference (or a retry was counted), none otherwise.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payments ADD COLUMN submissions integer NOT NULL DEFAULT 0');
  await knex.raw('UPDATE payments SET submissions = retry_count + 1 WHERE external_id IS NOT NULL OR retry_count > 0');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payments DROP COLUMN submissions');
}
