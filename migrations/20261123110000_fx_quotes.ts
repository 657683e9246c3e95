// Persisted FX quotes (DESIGN.md section 5b): the durable record of a locked rate. Its 30-second
// lock also lives in Redis as a key with a TTL; the record is what a later execution is decided
// on, so a Redis that lost its keys never decides money.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('fx_quotes', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('from_currency').notNullable();
    t.text('to_currency').notNullable();
    t.decimal('from_amount', 38, 6).notNullable();
    t.decimal('rate', 20, 6).notNullable();
    t.decimal('mid_rate', 20, 6).notNullable();
    t.decimal('spread', 10, 6).notNullable();
    t.decimal('to_amount', 38, 6).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('consumed_at', { useTz: true });
    t.index(['account_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE fx_quotes ADD CONSTRAINT fx_quotes_amounts_positive CHECK (from_amount > 0 AND to_amount > 0 AND rate > 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('fx_quotes');
}
