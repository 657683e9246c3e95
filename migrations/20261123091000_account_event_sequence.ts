// Every domain event of an account gets the account's next sequence number (1, 2, 3, ...),
// assigned in the ledger's transaction from a counter row that stays locked until commit: two
// ledger processes writing events of one account take turns, so the numbers have no gaps and
// follow commit order. A client that reconnects with Last-Event-ID replays by this number, and
// a stream delivers live events in its order (src/notifications/stream.ts).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_event_sequences', (t) => {
    t.uuid('account_id').primary();
    t.bigInteger('last_seq').notNullable();
  });
  await knex.schema.alterTable('outbox', (t) => {
    t.bigInteger('account_seq');
  });
  await knex.raw(`CREATE UNIQUE INDEX outbox_account_seq ON outbox (account_id, account_seq) WHERE account_seq IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS outbox_account_seq');
  await knex.schema.alterTable('outbox', (t) => {
    t.dropColumn('account_seq');
  });
  await knex.schema.dropTableIfExists('account_event_sequences');
}
