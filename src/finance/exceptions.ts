// Reconciliation exceptions (DESIGN.md section 5e): the items of a stored report that are not
// matched, kept once per pair of sides, as the queue finance works. A report's run records them
// in its own transaction: it first closes the open ones its matching now settles (a line that
// came days late), then opens the new ones; a movement or line already known keeps its exception.
// One category comes from no report: `late_completion`, a transfer a partner paid after the ledger
// had failed it, opened by the ledger in the round that completes it (ledger/round-write.ts).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { bulkRaw } from '../db';
import type { DomainEventEnvelope } from '../../ledger/messages';
import type { Candidate, MovementSide } from './match';

export type ExceptionCategory = 'ledger_only' | 'statement_only' | 'mismatched' | 'late_completion' | 'ambiguous' | 'batch';
export type ExceptionResolution = 'matched' | 'explained' | 'adjusted';

export interface ExceptionRow {
  id: string; reconciliation_id: string | null; partner: string; category: ExceptionCategory;
  /** late_completion: the transfer, what was held again from the sender, and what is owed through the receivable. */
  transfer_id: string | null; reheld_amount: string | null; receivable_amount: string | null;
  ledger_entry_id: string | null; statement_line_id: string | null; reference: string | null; currency: string;
  ledger_amount: string | null; statement_amount: string | null; field: string | null; ledger_value: string | null; statement_value: string | null;
  reason: string; amount_tolerance: string; status: 'open' | 'resolved'; resolution: ExceptionResolution | null; note: string | null;
  resolved_by: string | null; resolved_at: Date | null; resolved_by_reconciliation_id: string | null; counterpart_exception_id: string | null;
  adjustment_entry_id: string | null; created_at: Date;
  /** The ledger side (a batch: every movement it lists), and an ambiguous exception's possible other sides. */
  movements: MovementSide[]; candidates: Candidate[];
}

export type ExceptionView = Omit<ExceptionRow, 'resolved_at' | 'created_at'> & { resolved_at: string | null; created_at: string };

export const EXCEPTION_COLUMNS = [
  'id', 'reconciliation_id', 'partner', 'category', 'transfer_id', 'reheld_amount', 'receivable_amount', 'ledger_entry_id', 'statement_line_id', 'reference', 'currency', 'ledger_amount', 'statement_amount',
  'field', 'ledger_value', 'statement_value', 'reason', 'amount_tolerance', 'status', 'resolution', 'note', 'resolved_by', 'resolved_at',
  'resolved_by_reconciliation_id', 'counterpart_exception_id', 'adjustment_entry_id', 'created_at', 'movements', 'candidates',
] as const;

export const viewOfException = (row: ExceptionRow): ExceptionView => ({
  ...row, resolved_at: row.resolved_at ? row.resolved_at.toISOString() : null, created_at: row.created_at.toISOString(),
});

/** The event a resolution announces, on domain.events like every event; operator events belong to no account. */
export function resolvedEvent(row: ExceptionRow, environment: string, adjustment: string | null): DomainEventEnvelope {
  return {
    id: randomUUID(), type: 'reconciliation.exception_resolved', created_at: (row.resolved_at ?? new Date()).toISOString(), environment,
    resource_type: 'reconciliation_exception', resource_id: row.id, account_id: null, account_seq: 0,
    data: {
      id: row.id, status: 'resolved', amount: adjustment, currency: adjustment === null ? null : row.currency,
      attributes: JSON.stringify({
        partner: row.partner, category: row.category, resolution: row.resolution, note: row.note, resolved_by: row.resolved_by,
        reconciliation_id: row.reconciliation_id, transfer_id: row.transfer_id, resolved_by_reconciliation_id: row.resolved_by_reconciliation_id,
        ledger_entry_id: row.ledger_entry_id, statement_line_id: row.statement_line_id,
        counterpart_exception_id: row.counterpart_exception_id, adjustment_entry_id: row.adjustment_entry_id,
      }),
    },
  };
}

export interface RecordedExceptions { opened: number; resolved: ExceptionRow[] }

interface RunOf { id: string; partner: string; from_date: string; to_date: string; amount_tolerance: string; created_at: Date }

/**
 * From the run's stored items: closes the open exceptions its matching settles, then opens one
 * for each unmatched item not yet known. A matched pair settles the exceptions of either side (a
 * movement once reported alone, a line once reported alone, a pair once mismatched); a
 * mismatched pair settles only the "alone" ones of its sides, since a disagreement is still one.
 * The items that closed an exception say so in their reason.
 */
export async function recordExceptions(trx: Knex.Transaction, run: RunOf): Promise<RecordedExceptions> {
  const itemsOf = (category: string, side: string) => `SELECT ${side} FROM reconciliation_items WHERE reconciliation_id = :run AND category = '${category}' AND ${side} IS NOT NULL`;
  const note = `settled by reconciliation ${run.id} of ${run.from_date} to ${run.to_date}, whose matching paired it`;
  const { rows: resolved }: { rows: ExceptionRow[] } = await bulkRaw(trx,
    `UPDATE reconciliation_exceptions
        SET status = 'resolved', resolution = 'matched', note = :note, resolved_by = :by, resolved_at = :at, resolved_by_reconciliation_id = :run
      WHERE partner = :partner AND status = 'open' AND (
            (category IN ('ledger_only', 'mismatched', 'ambiguous') AND ledger_entry_id IN (${itemsOf('matched', 'ledger_entry_id')}))
         OR (category IN ('statement_only', 'mismatched', 'ambiguous', 'batch') AND statement_line_id IN (${itemsOf('matched', 'statement_line_id')}))
         OR (category = 'ledger_only' AND ledger_entry_id IN (${itemsOf('mismatched', 'ledger_entry_id')}))
         OR (category = 'statement_only' AND ledger_entry_id IS NULL AND statement_line_id IN (${itemsOf('mismatched', 'statement_line_id')})))
      RETURNING ${EXCEPTION_COLUMNS.join(', ')}`,
    { note, by: `reconciliation:${run.id}`, at: run.created_at, run: run.id, partner: run.partner },
  );
  if (resolved.length > 0) {
    await bulkRaw(trx,
      `UPDATE reconciliation_items i SET reason = i.reason || closed.what
         FROM (SELECT i2.seq, string_agg(format('; closes exception %s (%s, reported by reconciliation %s)', x.id, x.category, x.reconciliation_id), '' ORDER BY x.seq) AS what
                 FROM reconciliation_items i2 JOIN reconciliation_exceptions x ON x.resolved_by_reconciliation_id = i2.reconciliation_id
                  AND ((x.category <> 'statement_only' AND x.ledger_entry_id = i2.ledger_entry_id) OR (x.category <> 'ledger_only' AND x.statement_line_id = i2.statement_line_id))
                WHERE i2.reconciliation_id = :run AND i2.category IN ('matched', 'mismatched')
                GROUP BY i2.seq) closed
        WHERE i.reconciliation_id = :run AND i.seq = closed.seq`,
      { run: run.id },
    );
  }
  // An open batch exception whose line now lists more (or other) movements of the ledger takes the
  // run's sum, so an adjustment posts the difference as it stands.
  await bulkRaw(trx,
    `UPDATE reconciliation_exceptions x SET ledger_amount = i.ledger_amount, ledger_value = i.ledger_value, movements = i.movements, reason = i.reason
       FROM reconciliation_items i
      WHERE i.reconciliation_id = :run AND i.category = 'batch' AND x.partner = :partner AND x.category = 'batch' AND x.status = 'open'
        AND x.statement_line_id = i.statement_line_id AND x.ledger_amount IS DISTINCT FROM i.ledger_amount`,
    { run: run.id, partner: run.partner },
  );
  const inserted = await bulkRaw(trx,
    `INSERT INTO reconciliation_exceptions (id, reconciliation_id, partner, category, ledger_entry_id, statement_line_id, reference, currency,
            ledger_amount, statement_amount, field, ledger_value, statement_value, reason, amount_tolerance, status, created_at, movements, candidates)
     SELECT gen_random_uuid(), :run, :partner, category, ledger_entry_id, statement_line_id, reference, currency, ledger_amount, statement_amount,
            field, ledger_value, statement_value, reason, :tolerance, 'open', :at, coalesce(movements, '[]'::jsonb), coalesce(candidates, '[]'::jsonb)
       FROM reconciliation_items WHERE reconciliation_id = :run AND category <> 'matched' ORDER BY seq
     ON CONFLICT DO NOTHING`,
    { run: run.id, partner: run.partner, tolerance: run.amount_tolerance, at: run.created_at },
  );
  return { opened: inserted.rowCount ?? 0, resolved };
}
