// Reconciliation exceptions (DESIGN.md section 5e): every item of a stored report that is not
// matched is an exception finance works, once per pair of sides: a later report of the same
// movement or line finds it again rather than opening another. Resolved, it names how, by whom,
// when, and what it was paired with or the adjusting entry it posted.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('reconciliation_exceptions', (t) => {
    t.uuid('id').primary();
    t.bigIncrements('seq', { primaryKey: false }); // the queue's order: oldest first
    t.uuid('reconciliation_id').notNullable().references('reconciliations.id');
    t.text('partner').notNullable();
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
    t.text('amount_tolerance').notNullable();
    t.text('status').notNullable();
    t.text('resolution');
    t.text('note');
    t.text('resolved_by');
    t.timestamp('resolved_at', { useTz: true });
    t.uuid('resolved_by_reconciliation_id').references('reconciliations.id');
    t.uuid('counterpart_exception_id').references('reconciliation_exceptions.id');
    t.uuid('adjustment_entry_id');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.unique(['seq']);
  });
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_category CHECK (category IN ('ledger_only', 'statement_only', 'mismatched'))`);
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_status CHECK (status IN ('open', 'resolved'))`);
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_resolution CHECK (resolution IS NULL OR resolution IN ('matched', 'explained', 'adjusted'))`);
  // Resolved means all of it recorded; open means none of it.
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_resolved_whole CHECK (
    (status = 'resolved') = (resolution IS NOT NULL AND note IS NOT NULL AND resolved_by IS NOT NULL AND resolved_at IS NOT NULL)
    AND coalesce(resolution = 'adjusted', false) = (adjustment_entry_id IS NOT NULL))`);
  await knex.raw(`CREATE UNIQUE INDEX reconciliation_exceptions_once ON reconciliation_exceptions (partner, coalesce(ledger_entry_id::text, ''), coalesce(statement_line_id, ''))`);
  await knex.raw(`CREATE INDEX reconciliation_exceptions_open_entry ON reconciliation_exceptions (partner, ledger_entry_id) WHERE status = 'open'`);
  await knex.raw(`CREATE INDEX reconciliation_exceptions_open_line ON reconciliation_exceptions (partner, statement_line_id) WHERE status = 'open'`);
  await knex.schema.alterTable('reconciliations', (t) => {
    t.jsonb('exceptions').notNullable().defaultTo(knex.raw(`'{"opened": 0, "resolved": 0}'::jsonb`));
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('reconciliations', (t) => t.dropColumn('exceptions'));
  await knex.schema.dropTable('reconciliation_exceptions');
}
