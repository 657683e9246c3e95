// A reconciliation reads the postings of a partner's settlement account over a few days
// (src/reconciliation/run.ts). Without this index it walks every posting the account ever had. Only system accounts (no
// account_id) are indexed: customer-to-customer postings, most of the ledger's writes, pay nothing.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX postings_system_account_created ON postings (ledger_account_id, created_at) WHERE account_id IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX postings_system_account_created');
}
