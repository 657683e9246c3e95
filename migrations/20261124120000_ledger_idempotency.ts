// The ledger's processed-command row is the idempotency record of the routes whose answer is the
// ledger's decision (DESIGN.md section 5f): it keeps the account, the Idempotency-Key and the
// request's fingerprint beside the outcome, decided in the same transaction as the money. The
// columns are null for commands that no client key names (partner results, payment updates).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('processed_commands', (t) => {
    t.uuid('account_id');
    t.text('idempotency_key');
    t.text('fingerprint');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('processed_commands', (t) => {
    t.dropColumn('fingerprint');
    t.dropColumn('idempotency_key');
    t.dropColumn('account_id');
  });
}
