// Reconciliation exceptions (DESIGN.md section 5e): the items of a stored report that are not
// matched, kept once per pair of sides, as the queue finance works. A report's run records them
// in its own transaction: it first closes the open ones its matching now settles (a line that
// came days late), then opens the new ones; a movement or line already known keeps its exception.
// One category comes from no report: `late_completion`, a transfer a partner paid after the ledger
// had failed it, opened by the ledger in the round that completes it (ledger/store/round-write.ts).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { formatAmount, isCurrency, Money, type Amount } from '../../ledger/money';
import { bulkRaw } from '../db';
import type { DomainEventEnvelope } from '../../ledger/messages';
import type { Candidate, MovementSide } from './match';
import { wallNow } from '../clock';

export type ExceptionCategory = 'ledger_only' | 'statement_only' | 'mismatched' | 'late_completion' | 'ambiguous' | 'batch';
export type ExceptionResolution = 'matched' | 'explained' | 'adjusted';
export type ExceptionStatus = 'open' | 'resolving' | 'resolved';

/** One step of an exception's life, oldest first; `opened` is not stored (created_at and the report say it). */
export interface HistoryEntry { at: string; action: 'opened' | 'resolving' | 'resolved' | 'auto_closed' | 'reopened'; by: string; note: string | null }

/** An adjustment in flight through the ledger: the request that asked for it, and what it posts. */
export interface PendingResolution { fingerprint: string; resolution: 'adjusted'; note: string; by: string; entry_id: string; amount: string; at: string }

export interface ExceptionRow {
  id: string; reconciliation_id: string | null; partner: string; category: ExceptionCategory;
  /** late_completion: the transfer, what was held again from the sender, and what is owed through the receivable. */
  transfer_id: string | null; reheld_amount: string | null; receivable_amount: string | null;
  ledger_entry_id: string | null; statement_line_id: string | null; reference: string | null; currency: string;
  ledger_amount: string | null; statement_amount: string | null; field: string | null; ledger_value: string | null; statement_value: string | null;
  reason: string; amount_tolerance: string; status: ExceptionStatus; resolution: ExceptionResolution | null; note: string | null;
  resolved_by: string | null; resolved_at: Date | null; resolved_by_reconciliation_id: string | null; counterpart_exception_id: string | null;
  adjustment_entry_id: string | null; created_at: Date;
  history: HistoryEntry[]; reverses_exception_id: string | null; pending_resolution: PendingResolution | null; resolution_fingerprint: string | null;
  /** The ledger side (a batch: every movement it lists), and an ambiguous exception's possible other sides. */
  movements: MovementSide[]; candidates: Candidate[];
}

export type ExceptionView = Omit<ExceptionRow, 'resolved_at' | 'created_at' | 'pending_resolution' | 'resolution_fingerprint'> & { resolved_at: string | null; created_at: string };

export const EXCEPTION_COLUMNS = [
  'id', 'reconciliation_id', 'partner', 'category', 'transfer_id', 'reheld_amount', 'receivable_amount', 'ledger_entry_id', 'statement_line_id', 'reference', 'currency', 'ledger_amount', 'statement_amount',
  'field', 'ledger_value', 'statement_value', 'reason', 'amount_tolerance', 'status', 'resolution', 'note', 'resolved_by', 'resolved_at',
  'resolved_by_reconciliation_id', 'counterpart_exception_id', 'adjustment_entry_id', 'created_at', 'history', 'reverses_exception_id', 'pending_resolution', 'resolution_fingerprint',
  'movements', 'candidates',
] as const;

/** Who opened an exception: the report that raised it, or the ledger (a late completion). */
const openerOf = (row: ExceptionRow) => (row.reconciliation_id ? `reconciliation:${row.reconciliation_id}` : 'ledger');

export const viewOfException = ({ pending_resolution: pending, resolution_fingerprint: print, ...row }: ExceptionRow): ExceptionView => {
  void pending; void print;
  const opened: HistoryEntry = { at: row.created_at.toISOString(), action: 'opened', by: openerOf(row as ExceptionRow), note: row.reason };
  return { ...row, history: [opened, ...(row.history ?? [])], resolved_at: row.resolved_at ? row.resolved_at.toISOString() : null, created_at: row.created_at.toISOString() };
};

/** A step of the history as SQL appends it: jsonb_build_array(...) of one entry. */
export const historyEntry = (at: Date, action: HistoryEntry['action'], by: string, note: string | null): string => JSON.stringify([{ at: at.toISOString(), action, by, note }]);

/**
 * statement − ledger, what an `adjusted` resolution posts; null when the sides do not disagree on
 * an amount. A late completion has nothing to adjust: the ledger completed it in balanced entries,
 * and what the sender's balance did not cover sits on the late-completion receivable, a claim on
 * the sender, not a difference with the partner; finance explains it.
 */
export function differenceOf(row: Pick<ExceptionRow, 'category' | 'field' | 'statement_amount' | 'ledger_amount'>): Amount | null {
  if (row.category === 'late_completion') return null;
  // A payment a batch line lists in another currency stands alone in its own: the statement has
  // none of it there (a pair of one currency each has no difference to post: explain it).
  if (row.category === 'mismatched' && row.field === 'currency') return row.statement_amount === null ? new Money(row.ledger_amount ?? 0).negated() : null;
  if (row.category === 'mismatched' && row.field !== 'amount' && row.field !== 'fee') return null;
  const difference = new Money(row.statement_amount ?? 0).minus(row.ledger_amount ?? 0);
  return difference.isZero() ? null : difference;
}

const eventOf = (row: ExceptionRow, type: string, environment: string, at: Date, amount: string | null, attributes: Record<string, unknown>): DomainEventEnvelope => ({
  id: randomUUID(), type, created_at: at.toISOString(), environment,
  resource_type: 'reconciliation_exception', resource_id: row.id, account_id: null, account_seq: 0,
  data: { id: row.id, status: row.status, amount, currency: amount === null ? null : row.currency, attributes: JSON.stringify(attributes) },
});

/** The event a resolution announces, on domain.events like every event; operator events belong to no account. */
export function resolvedEvent(row: ExceptionRow, environment: string, adjustment: string | null): DomainEventEnvelope {
  return eventOf(row, 'reconciliation.exception_resolved', environment, row.resolved_at ?? wallNow(), adjustment, {
    partner: row.partner, category: row.category, resolution: row.resolution, note: row.note, resolved_by: row.resolved_by,
    reconciliation_id: row.reconciliation_id, transfer_id: row.transfer_id, resolved_by_reconciliation_id: row.resolved_by_reconciliation_id,
    ledger_entry_id: row.ledger_entry_id, statement_line_id: row.statement_line_id,
    counterpart_exception_id: row.counterpart_exception_id, adjustment_entry_id: row.adjustment_entry_id,
  });
}

/** The event of an exception a run opened; `amount` is the difference an adjustment would post, if any. */
export function openedEvent(row: ExceptionRow, environment: string): DomainEventEnvelope {
  const difference = differenceOf(row);
  const amount = difference === null ? null : isCurrency(row.currency) ? formatAmount(difference, row.currency) : difference.toFixed();
  return eventOf(row, 'reconciliation.exception_opened', environment, row.created_at, amount, {
    partner: row.partner, category: row.category, reconciliation_id: row.reconciliation_id, reference: row.reference,
    ledger_entry_id: row.ledger_entry_id, statement_line_id: row.statement_line_id, ledger_amount: row.ledger_amount, statement_amount: row.statement_amount,
    field: row.field, reason: row.reason, reverses_exception_id: row.reverses_exception_id,
  });
}

export interface RecordedExceptions { opened: ExceptionRow[]; resolved: ExceptionRow[] }

export interface RunOf { id: string; partner: string; from_date: string; to_date: string; amount_tolerance: string; created_at: Date }

/** What a run paired with a line: the line, its movements, and their amounts (matched, or mismatched on some field). */
interface ArrivedGroup {
  statement_line_id: string; ledger_entry_ids: string[]; reference: string | null; currency: string;
  /** The movements' sum: what the statement now confirms of the ledger's side. */
  ledger_sum: string;
}

const RETURNING = `RETURNING ${EXCEPTION_COLUMNS.join(', ')}`;

/** An item that pairs a movement with a line; a payment a batch line lists in another currency is not paired by it (it stands alone in its own). */
const PAIRED = `category IN ('matched', 'mismatched') AND ledger_entry_id IS NOT NULL AND statement_line_id IS NOT NULL
        AND NOT (category = 'mismatched' AND field = 'currency' AND statement_amount IS NULL)`;

/** The adjusted exceptions a reversal may be owed for: one side alone, an ambiguous side, or a batch. */
const REVERSIBLE = `(x.category IN ('ledger_only', 'statement_only', 'ambiguous', 'batch') OR (x.category = 'mismatched' AND x.field = 'currency' AND x.statement_amount IS NULL))
        AND (x.status = 'resolving' OR x.resolution = 'adjusted')
        AND NOT EXISTS (SELECT 1 FROM reconciliation_exceptions r WHERE r.reverses_exception_id = x.id)`;

/**
 * The other side of an exception that was adjusted (or whose adjustment is in flight) has come: a
 * run paired what it named (its movement, its line, a batch line with its movements, a line by a
 * subset), or a batch line it did not match lists the payment adjusted alone. The adjustment posted for the missing side is now too much, whatever the shape of the
 * pair. For each such exception, once, a new `mismatched` exception on `amount` that
 * `reverses_exception_id` it, whose adjustment is exactly the reverse of the first, in its
 * currency (so on the settlement account it was posted to): its `statement_amount` is what the
 * statement now confirms of the ledger's side (the movements paired with the line), its
 * `ledger_amount` that plus the adjustment. A pair that still disagrees (a fee) has its own
 * exception for that. The adjusted exception stays resolved: its entry did post. Returns the
 * exceptions opened, in the run's transaction.
 */
async function reverseArrivedAdjustments(trx: Knex.Transaction, run: RunOf): Promise<ExceptionRow[]> {
  const paired = `SELECT ledger_entry_id, statement_line_id FROM reconciliation_items
                   WHERE reconciliation_id = :run AND ${PAIRED}`;
  // A payment a batch line lists has arrived on the statement too, matched or not: the batch's
  // exception counts it on the ledger side from then on.
  const listed = `SELECT (m->>'ledger_entry_id')::uuid AS ledger_entry_id, i.statement_line_id, i.reference, i.currency, (m->>'amount')::numeric AS amount, i.seq
                    FROM reconciliation_items i CROSS JOIN LATERAL jsonb_array_elements(i.movements) m
                   WHERE i.reconciliation_id = :run AND i.category = 'batch'`;
  const { rows: adjusted }: { rows: ExceptionRow[] } = await bulkRaw(trx,
    `WITH p AS MATERIALIZED (${paired}), b AS MATERIALIZED (SELECT DISTINCT ledger_entry_id FROM (${listed}) l)
     SELECT ${EXCEPTION_COLUMNS.map((c) => `x.${c}`).join(', ')} FROM reconciliation_exceptions x
      WHERE x.partner = :partner AND ${REVERSIBLE}
        AND (x.ledger_entry_id IN (SELECT ledger_entry_id FROM p) OR x.statement_line_id IN (SELECT statement_line_id FROM p)
             OR (x.category IN ('ledger_only', 'ambiguous') AND x.statement_line_id IS NULL AND x.ledger_entry_id IN (SELECT ledger_entry_id FROM b)))
      ORDER BY x.seq FOR UPDATE OF x`,
    { run: run.id, partner: run.partner },
  );
  if (adjusted.length === 0) return [];
  // The groups the run paired: per line, its movements (one for a pair, several for a batch or a
  // subset); and per batch line it did not match, the movements it lists.
  const { rows: groups }: { rows: ArrivedGroup[] } = await bulkRaw(trx,
    `WITH sides AS (
       SELECT ledger_entry_id, statement_line_id, reference, currency, ledger_amount::numeric AS amount, seq FROM reconciliation_items WHERE reconciliation_id = :run AND ${PAIRED}
       UNION ALL ${listed})
     SELECT statement_line_id, array_agg(ledger_entry_id::text ORDER BY seq) AS ledger_entry_ids, min(reference) AS reference, min(currency) AS currency,
            sum(amount)::text AS ledger_sum
       FROM sides
      WHERE statement_line_id IN (SELECT statement_line_id FROM sides WHERE ledger_entry_id = ANY(:entries::uuid[]) OR statement_line_id = ANY(:lines::text[]))
      GROUP BY statement_line_id`,
    { run: run.id, entries: adjusted.map((x) => x.ledger_entry_id).filter((id) => id !== null), lines: adjusted.map((x) => x.statement_line_id).filter((id) => id !== null) },
  );
  const opened: ExceptionRow[] = [];
  for (const row of adjusted) {
    // A payment listed in another currency is settled when a line of its own takes it: found by its movement.
    const byLine = row.category === 'mismatched' ? undefined : groups.find((g) => g.statement_line_id === row.statement_line_id);
    const group = byLine ?? groups.find((g) => row.ledger_entry_id !== null && g.ledger_entry_ids.includes(row.ledger_entry_id));
    if (!group) continue;
    const adjustment = new Money(row.pending_resolution?.amount ?? differenceOf(row) ?? 0);
    const entry = row.pending_resolution?.entry_id ?? row.adjustment_entry_id;
    const format = (amount: Amount) => (isCurrency(row.currency) ? formatAmount(amount, row.currency) : amount.toFixed());
    const confirmed = format(new Money(group.ledger_sum));
    const counted = format(new Money(group.ledger_sum).plus(adjustment));
    const reason = `the other side of exception ${row.id} (${row.category}) arrived: line ${group.statement_line_id} with ${group.ledger_entry_ids.length === 1 ? `entry ${group.ledger_entry_ids[0]}` : `entries ${group.ledger_entry_ids.join(', ')}`}, after its adjustment of ${adjustment.toFixed()} `
      + `(entry ${entry}${row.status === 'resolving' ? ', in flight' : ''}): the ledger side counts the adjustment, and resolving this exception adjusted reverses exactly it`;
    const { rows }: { rows: ExceptionRow[] } = await trx.raw(
      `INSERT INTO reconciliation_exceptions (id, reconciliation_id, partner, category, ledger_entry_id, statement_line_id, reference, currency,
              ledger_amount, statement_amount, field, ledger_value, statement_value, reason, amount_tolerance, status, created_at, reverses_exception_id)
       VALUES (gen_random_uuid(), ?, ?, 'mismatched', ?, ?, ?, ?, ?, ?, 'amount', ?, ?, ?, ?, 'open', ?, ?)
       ON CONFLICT DO NOTHING ${RETURNING}`,
      [run.id, run.partner, row.ledger_entry_id ?? group.ledger_entry_ids[0], group.statement_line_id, group.reference ?? row.reference, row.currency, counted, confirmed,
        counted, confirmed, reason, run.amount_tolerance, run.created_at, row.id],
    );
    opened.push(...rows);
  }
  return opened;
}

/**
 * From the run's stored items: closes the open exceptions its matching settles, then opens one
 * for each unmatched item not yet known. A matched pair settles the exceptions of either side (a
 * movement once reported alone, a line once reported alone, a pair once mismatched); a
 * mismatched pair settles only the "alone" ones of its sides, since a disagreement is still one.
 * Only `open` exceptions close so: one whose adjustment is in flight (`resolving`) or posted
 * (`adjusted`) is not the run's to settle; its arrived side opens a reversal instead
 * (reverseArrivedAdjustments), and that reversal is finance's to adjust: its pair matches by design,
 * so no run settles it. The items that closed an exception say so in their reason.
 */
export async function recordExceptions(trx: Knex.Transaction, run: RunOf): Promise<RecordedExceptions> {
  const itemsOf = (category: string, side: string) => `SELECT ${side} FROM reconciliation_items WHERE reconciliation_id = :run AND category = '${category}' AND ${side} IS NOT NULL`;
  const note = `settled by reconciliation ${run.id} of ${run.from_date} to ${run.to_date}, whose matching paired it`;
  const by = `reconciliation:${run.id}`;
  const { rows: resolved }: { rows: ExceptionRow[] } = await bulkRaw(trx,
    `UPDATE reconciliation_exceptions
        SET status = 'resolved', resolution = 'matched', note = :note, resolved_by = :by, resolved_at = :at, resolved_by_reconciliation_id = :run,
            history = history || :step::jsonb
      WHERE partner = :partner AND status = 'open' AND reverses_exception_id IS NULL AND (
            (category IN ('ledger_only', 'mismatched', 'ambiguous') AND ledger_entry_id IN (${itemsOf('matched', 'ledger_entry_id')}))
         OR (category IN ('statement_only', 'mismatched', 'ambiguous', 'batch') AND statement_line_id IN (${itemsOf('matched', 'statement_line_id')}))
         OR (category = 'ledger_only' AND ledger_entry_id IN (${itemsOf('mismatched', 'ledger_entry_id')}))
         OR (category = 'statement_only' AND ledger_entry_id IS NULL AND statement_line_id IN (${itemsOf('mismatched', 'statement_line_id')})))
      ${RETURNING}`,
    { note, by, at: run.created_at, run: run.id, partner: run.partner, step: historyEntry(run.created_at, 'auto_closed', by, note) },
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
  // A payment once reported alone (no line settles it, or only lines unsure of it) that a batch
  // line now lists (a batch of a day still going on, in a later export) is the batch's: its
  // difference is in the batch's exception from this run on, so the one it had alone closes, or
  // adjusting both would take it off the books twice.
  const listedNote = `listed by a batch line in reconciliation ${run.id} of ${run.from_date} to ${run.to_date}: the batch's exception carries it`;
  // The listed payments are read once (MATERIALIZED): as a subquery of the UPDATE, Postgres
  // unpacked the batch lines' movements again for each open exception (23 s for a day of 100,000
  // payments reconciled again, with 2,000 open and a batch line of 9,000).
  const { rows: listed }: { rows: ExceptionRow[] } = await bulkRaw(trx,
    `WITH listed AS MATERIALIZED (
       SELECT DISTINCT (m->>'ledger_entry_id')::uuid AS ledger_entry_id FROM reconciliation_items i CROSS JOIN LATERAL jsonb_array_elements(i.movements) m
        WHERE i.reconciliation_id = :run AND i.category = 'batch')
     UPDATE reconciliation_exceptions
        SET status = 'resolved', resolution = 'explained', note = :note, resolved_by = :by, resolved_at = :at, resolved_by_reconciliation_id = :run,
            history = history || :step::jsonb
      WHERE partner = :partner AND status = 'open' AND reverses_exception_id IS NULL
        AND category IN ('ledger_only', 'ambiguous') AND statement_line_id IS NULL
        AND ledger_entry_id IN (SELECT ledger_entry_id FROM listed)
      ${RETURNING}`,
    { note: listedNote, by, at: run.created_at, run: run.id, partner: run.partner, step: historyEntry(run.created_at, 'auto_closed', by, listedNote) },
  );
  const reversals = await reverseArrivedAdjustments(trx, run);
  // An open batch exception whose line now lists more (or other) movements, or says another amount
  // (a batch of a day still going on), takes the run's sides, so an adjustment posts the difference
  // as it stands.
  await bulkRaw(trx,
    `UPDATE reconciliation_exceptions x SET ledger_amount = i.ledger_amount, ledger_value = i.ledger_value, statement_amount = i.statement_amount,
            statement_value = i.statement_value, movements = i.movements, reason = i.reason
       FROM reconciliation_items i
      WHERE i.reconciliation_id = :run AND i.category = 'batch' AND x.partner = :partner AND x.category = 'batch' AND x.status = 'open'
        AND x.statement_line_id = i.statement_line_id
        AND (x.ledger_amount IS DISTINCT FROM i.ledger_amount OR x.statement_amount IS DISTINCT FROM i.statement_amount)`,
    { run: run.id, partner: run.partner },
  );
  const { rows: inserted }: { rows: ExceptionRow[] } = await bulkRaw(trx,
    `INSERT INTO reconciliation_exceptions (id, reconciliation_id, partner, category, ledger_entry_id, statement_line_id, reference, currency,
            ledger_amount, statement_amount, field, ledger_value, statement_value, reason, amount_tolerance, status, created_at, movements, candidates)
     SELECT gen_random_uuid(), :run, :partner, category, ledger_entry_id, statement_line_id, reference, currency, ledger_amount, statement_amount,
            field, ledger_value, statement_value, reason, :tolerance, 'open', :at, coalesce(movements, '[]'::jsonb), coalesce(candidates, '[]'::jsonb)
       FROM reconciliation_items WHERE reconciliation_id = :run AND category <> 'matched' ORDER BY seq
     ON CONFLICT DO NOTHING ${RETURNING}`,
    { run: run.id, partner: run.partner, tolerance: run.amount_tolerance, at: run.created_at },
  );
  return { opened: [...reversals, ...inserted], resolved: [...resolved, ...listed] };
}
