// Reconciliation exceptions (DESIGN.md section 5e): the items of a stored report that are not
// matched, kept once per pair of sides, as the queue finance works. A report's run records them
// in its own transaction: it first closes the open ones its matching now settles (a line that
// came days late), then opens the new ones; a movement or line already known keeps its exception.
// One category comes from no report: `late_completion`, a transfer a partner paid after the ledger
// had failed it, opened by the ledger in the round that completes it (ledger/round-write.ts).
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { formatAmount, isCurrency, Money, type Amount } from '../../ledger/money';
import { bulkRaw } from '../db';
import type { DomainEventEnvelope } from '../../ledger/messages';
import type { Candidate, MovementSide } from './match';

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
  return eventOf(row, 'reconciliation.exception_resolved', environment, row.resolved_at ?? new Date(), adjustment, {
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

/** A movement and a line a run has paired (matched, or mismatched on some field). */
export interface ArrivedPair {
  ledger_entry_id: string; statement_line_id: string; reference: string | null; currency: string; ledger_amount: string; statement_amount: string;
}

const RETURNING = `RETURNING ${EXCEPTION_COLUMNS.join(', ')}`;

/**
 * The other side of an exception that was adjusted (or whose adjustment is in flight) has come:
 * the movement and line are a pair after all, so the adjustment posted for the missing side is
 * now too much. For each such exception, once, a new `mismatched` exception on `amount` that
 * `reverses_exception_id` it: its ledger side counts the adjustment, so resolving it `adjusted`
 * has the ledger post the reverse of the first adjustment (statement − (ledger + adjustment)).
 * The adjusted exception itself stays resolved: its entry did post. Called in the run's
 * transaction by whatever pairs movements with lines; returns the exceptions it opened.
 */
export async function lineArrivedForAdjusted(trx: Knex.Transaction, run: RunOf, pairs: readonly ArrivedPair[]): Promise<ExceptionRow[]> {
  if (pairs.length === 0) return [];
  const { rows: adjusted }: { rows: ExceptionRow[] } = await trx.raw(
    `SELECT ${EXCEPTION_COLUMNS.map((c) => `x.${c}`).join(', ')} FROM reconciliation_exceptions x
      WHERE x.partner = ? AND (x.status = 'resolving' OR x.resolution = 'adjusted')
        AND ((x.category = 'ledger_only' AND x.ledger_entry_id = ANY(?::uuid[])) OR (x.category = 'statement_only' AND x.ledger_entry_id IS NULL AND x.statement_line_id = ANY(?::text[])))
        AND NOT EXISTS (SELECT 1 FROM reconciliation_exceptions r WHERE r.reverses_exception_id = x.id)
      ORDER BY x.seq FOR UPDATE OF x`,
    [run.partner, pairs.map((p) => p.ledger_entry_id), pairs.map((p) => p.statement_line_id)],
  );
  const opened: ExceptionRow[] = [];
  for (const row of adjusted) {
    const pair = pairs.find((p) => (row.category === 'ledger_only' ? p.ledger_entry_id === row.ledger_entry_id : p.statement_line_id === row.statement_line_id))!;
    const adjustment = new Money(row.pending_resolution?.amount ?? differenceOf(row) ?? 0);
    const entry = row.pending_resolution?.entry_id ?? row.adjustment_entry_id;
    const sum = new Money(pair.ledger_amount).plus(adjustment);
    const ledgerAmount = isCurrency(pair.currency) ? formatAmount(sum, pair.currency) : sum.toFixed();
    const side = row.category === 'ledger_only' ? 'line' : 'movement';
    const reason = `the ${side} of exception ${row.id} arrived (${pair.statement_line_id} for entry ${pair.ledger_entry_id}) after its adjustment of ${adjustment.toFixed()} `
      + `(entry ${entry}${row.status === 'resolving' ? ', in flight' : ''}): the ledger side counts the adjustment, and resolving this exception adjusted reverses it`;
    const { rows }: { rows: ExceptionRow[] } = await trx.raw(
      `INSERT INTO reconciliation_exceptions (id, reconciliation_id, partner, category, ledger_entry_id, statement_line_id, reference, currency,
              ledger_amount, statement_amount, field, ledger_value, statement_value, reason, amount_tolerance, status, created_at, reverses_exception_id)
       VALUES (gen_random_uuid(), ?, ?, 'mismatched', ?, ?, ?, ?, ?, ?, 'amount', ?, ?, ?, ?, 'open', ?, ?)
       ON CONFLICT DO NOTHING ${RETURNING}`,
      [run.id, run.partner, pair.ledger_entry_id, pair.statement_line_id, pair.reference, pair.currency, ledgerAmount, pair.statement_amount,
        ledgerAmount, pair.statement_amount, reason, run.amount_tolerance, run.created_at, row.id],
    );
    opened.push(...rows);
  }
  return opened;
}

/** The pairs a run made whose sides were once alone in an adjusted exception (few: read in full). */
async function arrivedForAdjusted(trx: Knex.Transaction, run: RunOf): Promise<ArrivedPair[]> {
  const { rows } = await bulkRaw(trx,
    `SELECT DISTINCT i.ledger_entry_id, i.statement_line_id, i.reference, i.currency, i.ledger_amount, i.statement_amount
       FROM reconciliation_exceptions x JOIN reconciliation_items i ON i.reconciliation_id = :run AND i.category IN ('matched', 'mismatched')
        AND i.ledger_entry_id IS NOT NULL AND i.statement_line_id IS NOT NULL
        AND ((x.category = 'ledger_only' AND i.ledger_entry_id = x.ledger_entry_id) OR (x.category = 'statement_only' AND x.ledger_entry_id IS NULL AND i.statement_line_id = x.statement_line_id))
      WHERE x.partner = :partner AND (x.status = 'resolving' OR x.resolution = 'adjusted')`,
    { run: run.id, partner: run.partner },
  );
  return rows as ArrivedPair[];
}

/**
 * From the run's stored items: closes the open exceptions its matching settles, then opens one
 * for each unmatched item not yet known. A matched pair settles the exceptions of either side (a
 * movement once reported alone, a line once reported alone, a pair once mismatched); a
 * mismatched pair settles only the "alone" ones of its sides, since a disagreement is still one.
 * Only `open` exceptions close so: one whose adjustment is in flight (`resolving`) or posted
 * (`adjusted`) is not the run's to settle; its arrived side opens a reversal instead
 * (lineArrivedForAdjusted), and that reversal is finance's to adjust: its pair matches by design,
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
  const reversals = await lineArrivedForAdjusted(trx, run, await arrivedForAdjusted(trx, run));
  // An open batch exception whose line now lists more (or other) movements of the ledger takes the
  // run's sum, so an adjustment posts the difference as it stands.
  await bulkRaw(trx,
    `UPDATE reconciliation_exceptions x SET ledger_amount = i.ledger_amount, ledger_value = i.ledger_value, movements = i.movements, reason = i.reason
       FROM reconciliation_items i
      WHERE i.reconciliation_id = :run AND i.category = 'batch' AND x.partner = :partner AND x.category = 'batch' AND x.status = 'open'
        AND x.statement_line_id = i.statement_line_id AND x.ledger_amount IS DISTINCT FROM i.ledger_amount`,
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
  return { opened: [...reversals, ...inserted], resolved };
}
