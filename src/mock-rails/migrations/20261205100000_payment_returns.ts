// A return is a payment of its own that gives back part of an earlier one (payments.ts): `returns`
// names that payment, and the partner sums a payment's returns by it.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE mock_rails.payments ADD COLUMN returns text;
    CREATE INDEX payments_returns ON mock_rails.payments (book, partner, returns) WHERE returns IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX mock_rails.payments_returns; ALTER TABLE mock_rails.payments DROP COLUMN returns');
}
