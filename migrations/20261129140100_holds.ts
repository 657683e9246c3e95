// Holds (DESIGN.md section 5g): authorize now, capture or void later. A hold moves its amount from
// the main balance's or a wallet's available to its held ledger account; captures pay recipients
// from there, a void or the expiry releases what is left. The ledger alone writes this table, in
// the round that moves the money (ledger/store/round-write.ts). `captures` keeps each capture in order.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('holds', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.uuid('wallet_id').references('wallets.id');
    t.text('command_id').notNullable().unique();
    t.text('status').notNullable();
    t.text('currency').notNullable();
    t.decimal('amount', 38, 6).notNullable();
    t.decimal('captured_amount', 38, 6).notNullable().defaultTo(0);
    t.decimal('released_amount', 38, 6).notNullable().defaultTo(0);
    t.text('description');
    t.jsonb('captures').notNullable().defaultTo('[]');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw(`ALTER TABLE holds ADD CONSTRAINT holds_status_known CHECK (status IN ('active', 'captured', 'voided', 'expired'))`);
  // What a hold took is captured, released or still held, never more: a second outcome for the
  // same money breaks this, whatever the code did.
  await knex.raw(`ALTER TABLE holds ADD CONSTRAINT holds_money_conserved CHECK (
    amount > 0 AND captured_amount >= 0 AND released_amount >= 0 AND captured_amount + released_amount <= amount
    AND ((status = 'active') = (captured_amount + released_amount < amount)))`);
  await knex.raw('CREATE INDEX holds_account_created ON holds (account_id, created_at DESC, id DESC)');
  // The ledger's expiry sweep finds the active holds that are due.
  await knex.raw(`CREATE INDEX holds_active_by_expiry ON holds (expires_at) WHERE status = 'active'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE holds');
}
