// A partner keeps what it was told to pay with a payment (the beneficiary and the caller's
// metadata) and shows it back, as real partners do: a caller can see that a resubmission carried
// the whole instruction.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE mock_rails.payments ADD COLUMN beneficiary jsonb, ADD COLUMN metadata jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE mock_rails.payments DROP COLUMN beneficiary, DROP COLUMN metadata');
}
