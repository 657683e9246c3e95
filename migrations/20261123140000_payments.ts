// Payments through the partners (SPEC.md sections 2 and 3, Payment; DESIGN.md section 5c),
// written by the ledger as transfers are, with every status they took and when.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payments', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.uuid('customer_id').notNullable().references('customers.id');
    t.text('command_id').notNullable().unique();
    t.text('partner').notNullable();
    t.text('direction').notNullable();
    t.text('kind').notNullable();
    t.decimal('amount', 38, 6).notNullable();
    t.text('currency').notNullable();
    t.text('status').notNullable();
    t.text('external_id');
    t.text('claim_link');
    t.text('idempotency_key').notNullable();
    t.integer('retry_count').notNullable().defaultTo(0);
    t.text('funding_method_external_id');
    t.jsonb('payee'); // who an outbound payment pays
    t.text('purpose');
    t.text('failure_code');
    t.text('failure_message');
    t.jsonb('status_history').notNullable().defaultTo('[]');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('completed_at', { useTz: true });
  });
  await knex.raw(`ALTER TABLE payments ADD CONSTRAINT payments_status_known CHECK (status IN ('pending', 'sent', 'authorized', 'completed', 'failed', 'cancelled'))`);
  await knex.raw(`ALTER TABLE payments ADD CONSTRAINT payments_kind_known CHECK (kind IN ('add_funds', 'send', 'claimless') AND direction IN ('inbound', 'outbound'))`);
  await knex.raw(`ALTER TABLE payments ADD CONSTRAINT payments_completed_at CHECK ((status = 'completed') = (completed_at IS NOT NULL))`);
  await knex.raw('CREATE INDEX payments_account_created ON payments (account_id, created_at DESC, id DESC)');
  // Payments a settler still follows at the partner.
  await knex.raw(`CREATE INDEX payments_open ON payments (updated_at) WHERE status IN ('pending', 'sent', 'authorized')`);
  await knex.schema.alterTable('journal_entries', (t) => { t.uuid('payment_id').references('payments.id'); });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('journal_entries', (t) => { t.dropColumn('payment_id'); });
  await knex.schema.dropTableIfExists('payments');
}
