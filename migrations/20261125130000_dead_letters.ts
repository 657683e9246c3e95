// Messages a consumer could not handle at all (undecodable bytes, or a handler failure of a
// consumer without a final refusal of its own), kept beside their copy on the dead-letter topic so
// an operator can list them, count them and replay one after a fix (GET /v1/dead-letters).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('dead_letters', (t) => {
    t.uuid('id').primary();
    t.text('consumer_group').notNullable();
    t.text('source_topic').notNullable();
    t.integer('source_partition').notNullable();
    t.bigInteger('source_offset').notNullable();
    t.binary('message_key');
    t.binary('message_value');
    t.text('reason').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('replayed_at', { useTz: true });
    // A batch delivered again after a crash records its dead letter once.
    t.unique(['consumer_group', 'source_topic', 'source_partition', 'source_offset']);
    t.index(['created_at', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('dead_letters');
}
