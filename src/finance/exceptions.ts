// Reconciliation exceptions (DESIGN.md section 5e): the items of a stored report that are not
// matched, kept once per pair of sides, as the queue finance works. A report's run records them
// in its own transaction: it first closes the open ones its matching now settles (a line that
// came days late), then opens the new ones; a movement or line already known keeps its exception.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { DomainEventEnvelope } from '../../ledger/messages';
import type { ReportItem } from './match';

export type ExceptionCategory = 'ledger_only' | 'statement_only' | 'mismatched';
export type ExceptionResolution = 'matched' | 'explained' | 'adjusted';

export interface ExceptionRow {
  id: string; reconciliation_id: string; partner: string; category: ExceptionCategory;
  ledger_entry_id: string | null; statement_line_id: string | null; reference: string | null; currency: string;
  ledger_amount: string | null; statement_amount: string | null; field: string | null; ledger_value: string | null; statement_value: string | null;
  reason: string; amount_tolerance: string; status: 'open' | 'resolved'; resolution: ExceptionResolution | null; note: string | null;
  resolved_by: string | null; resolved_at: Date | null; resolved_by_reconciliation_id: string | null; counterpart_exception_id: string | null;
  adjustment_entry_id: string | null; created_at: Date;
}

export type ExceptionView = Omit<ExceptionRow, 'resolved_at' | 'created_at'> & { resolved_at: string | null; created_at: string };

export const EXCEPTION_COLUMNS = [
  'id', 'reconciliation_id', 'partner', 'category', 'ledger_entry_id', 'statement_line_id', 'reference', 'currency', 'ledger_amount', 'statement_amount',
  'field', 'ledger_value', 'statement_value', 'reason', 'amount_tolerance', 'status', 'resolution', 'note', 'resolved_by', 'resolved_at',
  'resolved_by_reconciliation_id', 'counterpart_exception_id', 'adjustment_entry_id', 'created_at',
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
        reconciliation_id: row.reconciliation_id, resolved_by_reconciliation_id: row.resolved_by_reconciliation_id,
        ledger_entry_id: row.ledger_entry_id, statement_line_id: row.statement_line_id,
        counterpart_exception_id: row.counterpart_exception_id, adjustment_entry_id: row.adjustment_entry_id,
      }),
    },
  };
}

export interface RecordedExceptions { opened: number; resolved: ExceptionRow[] }

interface RunOf { id: string; partner: string; from_date: string; to_date: string; amount_tolerance: string; created_at: Date }

/**
 * Closes the open exceptions this run's matching settles, then opens one for each unmatched
 * item not yet known. A matched pair settles the exceptions of either side (a movement once
 * reported alone, a line once reported alone, a pair once mismatched); a mismatched pair settles
 * only the "alone" ones of its sides, since a disagreement is still one. The matched items that
 * closed an exception say so in their reason.
 */
export async function recordExceptions(trx: Knex.Transaction, run: RunOf, items: ReportItem[]): Promise<RecordedExceptions> {
  const matchedEntries = new Set<string>();
  const matchedLines = new Set<string>();
  const pairedEntries = new Set<string>();
  const pairedLines = new Set<string>();
  for (const item of items) {
    if (item.category === 'matched') {
      if (item.ledger_entry_id) matchedEntries.add(item.ledger_entry_id);
      if (item.statement_line_id) matchedLines.add(item.statement_line_id);
    } else if (item.category === 'mismatched') {
      pairedEntries.add(item.ledger_entry_id!);
      pairedLines.add(item.statement_line_id!);
    }
  }
  const note = `settled by reconciliation ${run.id} of ${run.from_date} to ${run.to_date}, whose matching paired it`;
  const { rows: resolved }: { rows: ExceptionRow[] } = await trx.raw(
    `UPDATE reconciliation_exceptions
        SET status = 'resolved', resolution = 'matched', note = ?, resolved_by = ?, resolved_at = ?, resolved_by_reconciliation_id = ?
      WHERE partner = ? AND status = 'open' AND (
            (category IN ('ledger_only', 'mismatched') AND ledger_entry_id = ANY(?::uuid[]))
         OR (category IN ('statement_only', 'mismatched') AND statement_line_id = ANY(?::text[]))
         OR (category = 'ledger_only' AND ledger_entry_id = ANY(?::uuid[]))
         OR (category = 'statement_only' AND ledger_entry_id IS NULL AND statement_line_id = ANY(?::text[])))
      RETURNING ${EXCEPTION_COLUMNS.join(', ')}`,
    [note, `reconciliation:${run.id}`, run.created_at, run.id, run.partner, [...matchedEntries], [...matchedLines], [...pairedEntries], [...pairedLines]],
  );
  noteClosures(items, resolved);
  const open = items.filter((item) => item.category !== 'matched');
  if (open.length === 0) return { opened: 0, resolved };
  const column = (name: keyof ReportItem) => open.map((item) => item[name]) as string[];
  const { rows: inserted } = await trx.raw(
    `INSERT INTO reconciliation_exceptions (id, reconciliation_id, partner, category, ledger_entry_id, statement_line_id, reference, currency,
            ledger_amount, statement_amount, field, ledger_value, statement_value, reason, amount_tolerance, status, created_at)
     SELECT gen_random_uuid(), ?, ?, i.category, i.ledger_entry_id, i.statement_line_id, i.reference, i.currency, i.ledger_amount, i.statement_amount,
            i.field, i.ledger_value, i.statement_value, i.reason, ?, 'open', ?
       FROM unnest(?::text[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
            WITH ORDINALITY AS i(category, ledger_entry_id, statement_line_id, reference, currency, ledger_amount, statement_amount, field, ledger_value, statement_value, reason, n)
      ORDER BY i.n
     ON CONFLICT DO NOTHING RETURNING id`,
    [run.id, run.partner, run.amount_tolerance, run.created_at,
      column('category'), column('ledger_entry_id'), column('statement_line_id'), column('reference'), column('currency'), column('ledger_amount'),
      column('statement_amount'), column('field'), column('ledger_value'), column('statement_value'), column('reason')],
  );
  return { opened: inserted.length, resolved };
}

/** Each matched item that settled an open exception names it in its reason. */
function noteClosures(items: ReportItem[], resolved: ExceptionRow[]): void {
  if (resolved.length === 0) return;
  const byEntry = new Map<string, ExceptionRow>();
  const byLine = new Map<string, ExceptionRow>();
  for (const row of resolved) {
    if (row.ledger_entry_id && row.category !== 'statement_only') byEntry.set(row.ledger_entry_id, row);
    if (row.statement_line_id && row.category !== 'ledger_only') byLine.set(row.statement_line_id, row);
  }
  for (const item of items) {
    if (item.category === 'ledger_only' || item.category === 'statement_only') continue;
    const closed = [item.ledger_entry_id && byEntry.get(item.ledger_entry_id), item.statement_line_id && byLine.get(item.statement_line_id)]
      .filter((row): row is ExceptionRow => Boolean(row));
    for (const row of new Set(closed)) item.reason += `; closes exception ${row.id} (${row.category}, reported by reconciliation ${row.reconciliation_id})`;
  }
}
