// Finance (DESIGN.md section 5e): stored reconciliation reports, one row per item beside them,
// and the index the journal export walks (entries by the instant they were posted).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX journal_entries_created ON journal_entries (created_at, id)');
  await knex.schema.createTable('reconciliations', (t) => {
    t.uuid('id').primary();
    t.text('partner').notNullable();
    t.date('from_date').notNullable();
    t.date('to_date').notNullable();
    t.text('trigger').notNullable(); // api | schedule
    t.text('source').notNullable(); // partner (its statement API) | upload (a CSV the operator sent)
    t.text('amount_tolerance').notNullable();
    t.integer('date_tolerance_days').notNullable();
    t.jsonb('summary').notNullable();
    t.jsonb('totals').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['created_at', 'id']);
  });
  await knex.raw(`ALTER TABLE reconciliations ADD CONSTRAINT reconciliation_trigger_known CHECK (trigger IN ('api', 'schedule'))`);
  await knex.raw(`ALTER TABLE reconciliations ADD CONSTRAINT reconciliation_source_known CHECK (source IN ('partner', 'upload'))`);
  // The schedule reconciles each partner's day once, however many processes run it.
  await knex.raw(`CREATE UNIQUE INDEX reconciliations_scheduled_once ON reconciliations (partner, from_date) WHERE trigger = 'schedule'`);
  await knex.schema.createTable('reconciliation_items', (t) => {
    t.uuid('reconciliation_id').notNullable().references('reconciliations.id').onDelete('CASCADE');
    t.integer('seq').notNullable();
    t.text('category').notNullable();
    t.uuid('ledger_entry_id');
    t.text('statement_line_id');
    t.text('reference');
    t.text('currency').notNullable();
    t.text('ledger_amount');
    t.text('statement_amount');
    t.text('field');
    t.text('ledger_value');
    t.text('statement_value');
    t.text('reason').notNullable();
    t.primary(['reconciliation_id', 'seq']);
  });
  await knex.raw(`ALTER TABLE reconciliation_items ADD CONSTRAINT reconciliation_item_category CHECK (category IN ('matched', 'ledger_only', 'statement_only', 'mismatched'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('reconciliation_items');
  await knex.schema.dropTable('reconciliations');
  await knex.raw('DROP INDEX journal_entries_created');
}
