// A transfer a partner paid after the ledger had failed it (a late completion) is an exception
// for finance: the ledger opens it in the round that completes the transfer (ledger/store/round-write.ts),
// once per transfer. Such an exception comes from no reconciliation report, so the report is
// optional for it; it names the transfer, what was held again from the sender's available balance
// and what is owed through the late-completion receivable.
import type { Knex } from 'knex';

const CATEGORIES_BEFORE = `'ledger_only', 'statement_only', 'mismatched'`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('reconciliation_exceptions', (t) => {
    t.uuid('transfer_id');
    t.text('reheld_amount');
    t.text('receivable_amount');
  });
  await knex.raw('ALTER TABLE reconciliation_exceptions ALTER COLUMN reconciliation_id DROP NOT NULL');
  await knex.raw('ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exception_category');
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_category CHECK (category IN (${CATEGORIES_BEFORE}, 'late_completion'))`);
  // A report's exception names its report; a late completion names its transfer and both amounts instead.
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_source CHECK (
    CASE WHEN category = 'late_completion'
         THEN transfer_id IS NOT NULL AND reheld_amount IS NOT NULL AND receivable_amount IS NOT NULL
         ELSE reconciliation_id IS NOT NULL AND transfer_id IS NULL END)`);
  await knex.raw(`CREATE UNIQUE INDEX reconciliation_exceptions_late_completion_once ON reconciliation_exceptions (transfer_id) WHERE category = 'late_completion'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM reconciliation_exceptions WHERE category = 'late_completion'`);
  await knex.raw('DROP INDEX reconciliation_exceptions_late_completion_once');
  await knex.raw('ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exception_source');
  await knex.raw('ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exception_category');
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_category CHECK (category IN (${CATEGORIES_BEFORE}))`);
  await knex.schema.alterTable('reconciliation_exceptions', (t) => {
    t.dropColumn('receivable_amount');
    t.dropColumn('reheld_amount');
    t.dropColumn('transfer_id');
  });
  await knex.raw('ALTER TABLE reconciliation_exceptions ALTER COLUMN reconciliation_id SET NOT NULL');
}
