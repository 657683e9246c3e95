// Reversals of transfers (DESIGN.md section 5h): each kept on its transfer, in order, with their
// sum; Postgres holds that the sum never goes below zero nor past the transfer's amount.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE transfers ADD COLUMN reversed_amount numeric(38,6) NOT NULL DEFAULT 0, ADD COLUMN reversals jsonb NOT NULL DEFAULT '[]'::jsonb`);
  await knex.raw('ALTER TABLE transfers ADD CONSTRAINT transfers_reversed_within_amount CHECK (reversed_amount >= 0 AND reversed_amount <= amount)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE transfers DROP CONSTRAINT IF EXISTS transfers_reversed_within_amount');
  await knex.raw('ALTER TABLE transfers DROP COLUMN IF EXISTS reversals, DROP COLUMN IF EXISTS reversed_amount');
}
