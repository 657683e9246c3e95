// A resolution has one outcome (issue 39). An adjustment goes through the ledger, whose answer
// may come late: the exception is `resolving` meanwhile, with the request in flight recorded
// (`pending_resolution`), so nothing else resolves it and a retry of the same request finishes
// it. `resolution_fingerprint` is the request that resolved it, so the same request sent again
// answers the first resolution. Each exception keeps its `history`. A line that arrives for an
// adjusted exception opens a new one that `reverses_exception_id`; it names the same movement and
// line as other exceptions may, so the reversal is part of what makes an exception unique.
// A reconciliation run sent with an Idempotency-Key keeps the key and its request's fingerprint.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('reconciliation_exceptions', (t) => {
    t.jsonb('history').notNullable().defaultTo(knex.raw(`'[]'::jsonb`));
    t.jsonb('pending_resolution');
    t.text('resolution_fingerprint');
    t.uuid('reverses_exception_id').references('reconciliation_exceptions.id');
  });
  await knex.raw('ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exception_status');
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_status CHECK (status IN ('open', 'resolving', 'resolved'))`);
  // Resolving means an adjustment in flight, and only then.
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_resolving CHECK ((status = 'resolving') = (pending_resolution IS NOT NULL))`);
  // What is already resolved keeps its resolution in its history.
  await knex.raw(`UPDATE reconciliation_exceptions SET history = jsonb_build_array(jsonb_build_object(
      'at', to_char(resolved_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'action', CASE WHEN resolved_by_reconciliation_id IS NULL THEN 'resolved' ELSE 'auto_closed' END, 'by', resolved_by, 'note', note))
    WHERE status = 'resolved'`);
  await knex.raw('DROP INDEX reconciliation_exceptions_once');
  await knex.raw(`CREATE UNIQUE INDEX reconciliation_exceptions_once ON reconciliation_exceptions
    (partner, coalesce(ledger_entry_id::text, ''), coalesce(statement_line_id, ''), coalesce(reverses_exception_id::text, ''))`);
  await knex.raw('CREATE UNIQUE INDEX reconciliation_exceptions_reversed_once ON reconciliation_exceptions (reverses_exception_id) WHERE reverses_exception_id IS NOT NULL');
  await knex.schema.alterTable('reconciliations', (t) => {
    t.text('idempotency_key');
    t.text('request_fingerprint');
  });
  await knex.raw('CREATE UNIQUE INDEX reconciliations_idempotency_key ON reconciliations (idempotency_key) WHERE idempotency_key IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX reconciliations_idempotency_key');
  await knex.schema.alterTable('reconciliations', (t) => {
    t.dropColumn('request_fingerprint');
    t.dropColumn('idempotency_key');
  });
  await knex.raw(`DELETE FROM reconciliation_exceptions WHERE reverses_exception_id IS NOT NULL`);
  await knex.raw('DROP INDEX reconciliation_exceptions_reversed_once');
  await knex.raw('DROP INDEX reconciliation_exceptions_once');
  await knex.raw(`CREATE UNIQUE INDEX reconciliation_exceptions_once ON reconciliation_exceptions (partner, coalesce(ledger_entry_id::text, ''), coalesce(statement_line_id, ''))`);
  await knex.raw(`UPDATE reconciliation_exceptions SET status = 'open', pending_resolution = NULL WHERE status = 'resolving'`);
  await knex.raw('ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exception_resolving');
  await knex.raw('ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exception_status');
  await knex.raw(`ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exception_status CHECK (status IN ('open', 'resolved'))`);
  await knex.schema.alterTable('reconciliation_exceptions', (t) => {
    t.dropColumn('reverses_exception_id');
    t.dropColumn('resolution_fingerprint');
    t.dropColumn('pending_resolution');
    t.dropColumn('history');
  });
}
