// Wallets (DESIGN.md section 5g): named pockets of one account, each with ledger accounts of its
// own per currency (`wallet_available`, and `wallet_held` for holds on it), and the account's main
// balance gains a `held` ledger account per currency for its holds. ledger_accounts.wallet_id
// names a wallet's ledger accounts, so its balances and postings are read by the wallet. A wallet
// is closed, never deleted: its postings keep naming its ledger accounts.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('wallets', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('name').notNullable();
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('closed_at', { useTz: true });
  });
  await knex.raw('CREATE INDEX wallets_account_created ON wallets (account_id, created_at DESC, id DESC)');
  await knex.raw('ALTER TABLE ledger_accounts ADD COLUMN wallet_id uuid REFERENCES wallets (id)');
  await knex.raw('CREATE INDEX ledger_accounts_wallet ON ledger_accounts (wallet_id) WHERE wallet_id IS NOT NULL');
  await knex.raw('ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_known');
  await knex.raw(`ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_known
    CHECK (kind IN ('available', 'pending', 'system', 'held', 'wallet_available', 'wallet_held'))`);
  // A wallet's ledger accounts are its own, and only theirs name a wallet.
  await knex.raw(`ALTER TABLE ledger_accounts ADD CONSTRAINT wallet_accounts_name_their_wallet
    CHECK ((kind IN ('wallet_available', 'wallet_held')) = (wallet_id IS NOT NULL))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE ledger_accounts DROP CONSTRAINT wallet_accounts_name_their_wallet');
  await knex.raw('ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_known');
  await knex.raw(`ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_known CHECK (kind IN ('available', 'pending', 'system'))`);
  await knex.raw('ALTER TABLE ledger_accounts DROP COLUMN wallet_id');
  await knex.raw('DROP TABLE wallets');
}
