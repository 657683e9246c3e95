// Matching that is never wrong, and matched once for good (DESIGN.md section 5e):
// - every match a run makes is recorded, movement ↔ line and by which run, one row per side, so
//   a later run never matches either side again (a line whose movement an earlier run paired with
//   another line stays alone: an exception). A batch line is one row of the lines and one row per
//   movement it settles; a line whose content changed since (a day's statement still growing)
//   is matched afresh;
// - an item or exception may be `ambiguous` (a side without a reference fits several others:
//   `candidates` lists them) or `batch` (a batch line with all the movements it lists, in
//   `movements`, and the true net difference); an item whose side the run's search budget did not
//   reach says so, and the report counts them.
import type { Knex } from 'knex';

const ITEM_BEFORE = `'matched', 'ledger_only', 'statement_only', 'mismatched'`;
const EXCEPTION_BEFORE = `'ledger_only', 'statement_only', 'mismatched', 'late_completion'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE reconciliation_items DROP CONSTRAINT reconciliation_item_category');
  await knex.raw(`ALTER TABLE reconciliation_items ADD CONSTRAINT reconciliation_item_category CHECK (category IN (${ITEM_BEFORE}, 'ambiguous', 'batch'))`);
  await knex.schema.alterTable('reconciliation_items', (t) => {
    t.jsonb('movements');
    t.jsonb('candidates');
  });
  await knex.raw('ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exception_category');
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_category CHECK (category IN (${EXCEPTION_BEFORE}, 'ambiguous', 'batch'))`);
  await knex.schema.alterTable('reconciliation_exceptions', (t) => {
    t.jsonb('movements').notNullable().defaultTo(knex.raw(`'[]'::jsonb`));
    t.jsonb('candidates').notNullable().defaultTo(knex.raw(`'[]'::jsonb`));
  });
  // The exceptions of before: the ledger side they name.
  await knex.raw(`UPDATE reconciliation_exceptions x SET movements = jsonb_build_array(jsonb_build_object(
      'ledger_entry_id', x.ledger_entry_id, 'reference', x.reference, 'amount', x.ledger_amount, 'value_date', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')))
    FROM journal_entries e WHERE e.id = x.ledger_entry_id AND x.ledger_amount IS NOT NULL`);
  await knex.schema.alterTable('reconciliations', (t) => {
    t.integer('not_examined').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('reconciliation_matched_lines', (t) => {
    t.text('partner').notNullable();
    t.text('statement_line_id').notNullable();
    t.uuid('reconciliation_id').notNullable().references('reconciliations.id');
    t.text('reason').notNullable();
    // The line as it was matched (its net and settlement detail): a statement of a day still
    // going on may list more under the same batch line later, and that line is matched afresh.
    t.text('fingerprint').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['partner', 'statement_line_id']);
  });
  await knex.schema.createTable('reconciliation_matches', (t) => {
    t.uuid('ledger_entry_id').primary();
    t.text('partner').notNullable();
    t.text('statement_line_id').notNullable();
    t.uuid('reconciliation_id').notNullable().references('reconciliations.id');
    t.text('reason').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    // No foreign key to the line's row: the run writes both in one transaction, and a check per
    // row would cost a busy day seconds.
    t.index(['partner', 'statement_line_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('reconciliation_matches');
  await knex.schema.dropTable('reconciliation_matched_lines');
  await knex.schema.alterTable('reconciliations', (t) => t.dropColumn('not_examined'));
  await knex.raw(`DELETE FROM reconciliation_exceptions WHERE category IN ('ambiguous', 'batch')`);
  await knex.schema.alterTable('reconciliation_exceptions', (t) => {
    t.dropColumn('candidates');
    t.dropColumn('movements');
  });
  await knex.raw('ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exception_category');
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_category CHECK (category IN (${EXCEPTION_BEFORE}))`);
  await knex.raw(`DELETE FROM reconciliation_items WHERE category IN ('ambiguous', 'batch')`);
  await knex.schema.alterTable('reconciliation_items', (t) => {
    t.dropColumn('candidates');
    t.dropColumn('movements');
  });
  await knex.raw('ALTER TABLE reconciliation_items DROP CONSTRAINT reconciliation_item_category');
  await knex.raw(`ALTER TABLE reconciliation_items ADD CONSTRAINT reconciliation_item_category CHECK (category IN (${ITEM_BEFORE}))`);
}
