// Request logs say when a body was cut to its bound or cleaned of characters Postgres cannot
// store (src/request-logs/body-text.ts): such a log is kept, never dropped.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('request_logs', (t) => {
    t.boolean('truncated').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('request_logs', (t) => {
    t.dropColumn('truncated');
  });
}
