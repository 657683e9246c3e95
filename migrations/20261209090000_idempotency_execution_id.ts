// Each execution of an Idempotency-Key on the routes whose record the API keeps has an id
// (src/idempotency/guard.ts): made when the key is first claimed (or claimed again once its record
// expired), and kept when a retry takes over a claim whose request died (its lease lapsed). A
// request that died after its effect committed and before its answer was recorded is then
// executed again under the same id, and a creation, whose resource's id derives from it, finds
// what the first made instead of making a second. The column is added without a value for the
// rows there (a volatile default would rewrite the table under its lock, stopping every write
// that keeps a record); a row of before has none, and the claim that takes it gives it one.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE idempotency_records ADD COLUMN execution_id uuid');
  await knex.raw('ALTER TABLE idempotency_records ALTER COLUMN execution_id SET DEFAULT gen_random_uuid()');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE idempotency_records DROP COLUMN execution_id');
}
