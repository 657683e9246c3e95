// Outbox messages that can never reach Kafka (a payload its topic's schema refuses, a record
// larger than the broker takes), set aside by the outbox sweeper so the rounds behind them go on
// (consumers/ledger/sweeper.ts). One row per message, not per round: the other messages of the
// same round are sent. An operator lists them and replays one after a fix (GET /v1/outbox/set-aside).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outbox_set_aside', (t) => {
    t.uuid('id').primary();
    t.uuid('round_id').notNullable();
    t.text('topic').notNullable().comment('the base topic name, as in outbox_rounds');
    t.text('message_key').notNullable();
    t.jsonb('payload').notNullable();
    t.jsonb('headers');
    t.text('reason').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('replayed_at', { useTz: true });
    t.index(['created_at', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('outbox_set_aside');
}
