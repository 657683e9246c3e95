// Balances at an instant and balance alerts (DESIGN.md section 5g).
//
// Every posting already carries its ledger account's balance after it (`balance_after`), written
// by the ledger in the round's transaction: it is a checkpoint at every posting. The ledger takes
// a round's time after it has locked the round's ledger accounts, so on one ledger account the
// postings' times follow their order; the balance at an instant is the balance_after of its last
// posting at or before it, found by this index in time that does not grow with the history.
//
// balance_alerts: a threshold on one available balance (the main balance's or a wallet's, per
// currency); the ledger reads the alerts of a round's accounts with its locks and decides in the
// round whether a posting crossed one (ledger/alerts.ts).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX postings_account_time ON postings (ledger_account_id, created_at DESC, seq DESC)');
  await knex.schema.createTable('balance_alerts', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.uuid('wallet_id').references('wallets.id');
    t.text('currency').notNullable();
    t.text('direction').notNullable();
    t.decimal('threshold', 38, 6).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE balance_alerts ADD CONSTRAINT balance_alerts_direction_known CHECK (direction IN ('below', 'above'))`);
  await knex.raw('CREATE INDEX balance_alerts_account_created ON balance_alerts (account_id, created_at DESC, id DESC)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('balance_alerts');
  await knex.raw('DROP INDEX IF EXISTS postings_account_time');
}
