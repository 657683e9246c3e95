// The API's idempotency records are swept once expired (src/idempotency/sweep.ts): the sweep
// finds them by expiry, a batch at a time, without reading the whole table.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX idempotency_records_expires ON idempotency_records (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX idempotency_records_expires');
}
