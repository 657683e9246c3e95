// Matching by hand (README: "Working the exceptions"): a movement reported alone paired with a
// line reported alone, an ambiguous exception's candidate chosen, or the set an ambiguous line is
// the sum of. Each records the match for good (matches.ts) and closes the exceptions it settles,
// in the caller's transaction, under the exception's lock.
import type { Knex } from 'knex';
import { Money } from '../../ledger/money';
import { DomainError } from '../domain-error';
import { recordHandMatch } from './matches';
import { EXCEPTION_COLUMNS, historyEntry, type ExceptionResolution, type ExceptionRow } from './run-exceptions';
import { wallNow } from '../clock';

/** A resolution as finance asks for it. */
export interface Resolution {
  resolution: ExceptionResolution;
  note: string;
  /** matched: the other side, itself an open exception of the same partner and currency. */
  statementLineId?: string;
  ledgerEntryId?: string;
  /** matched, for an ambiguous line between sets: the candidate entries whose amounts add up to it. */
  ledgerEntryIds?: string[];
  /** Who resolves: the credential, never its secret. */
  by: string;
}

/** Closes an open (or resolving) exception as resolved: who, why, what it was paired with or posted, in its history. */
export async function closeException(
  trx: Knex.Transaction, row: ExceptionRow, resolution: Omit<Resolution, 'statementLineId' | 'ledgerEntryId'>, links: { counterpart?: string; entry?: string }, print: string | null, historyNote = resolution.note,
): Promise<ExceptionRow> {
  const at = wallNow();
  const [closed]: ExceptionRow[] = await trx('reconciliation_exceptions').where({ id: row.id }).whereIn('status', ['open', 'resolving']).update({
    status: 'resolved', resolution: resolution.resolution, note: resolution.note, resolved_by: resolution.by, resolved_at: at,
    counterpart_exception_id: links.counterpart ?? null, adjustment_entry_id: links.entry ?? null, pending_resolution: null, resolution_fingerprint: print,
    history: trx.raw('history || ?::jsonb', [historyEntry(at, 'resolved', resolution.by, historyNote)]),
  }, [...EXCEPTION_COLUMNS]);
  return closed;
}

/**
 * A `matched` resolution: a set named for an ambiguous line, a candidate chosen for an ambiguous
 * exception, or a movement reported alone paired with a line reported alone (both close).
 */
export async function matchByHand(trx: Knex.Transaction, row: ExceptionRow, resolution: Resolution, print: string): Promise<ExceptionRow[]> {
  if (resolution.ledgerEntryIds !== undefined) return chooseSet(trx, row, resolution, print, resolution.ledgerEntryIds);
  const side = resolution.statementLineId !== undefined ? 'statement_line_id' : 'ledger_entry_id';
  const named = resolution.statementLineId ?? resolution.ledgerEntryId!;
  if (row.category === 'ambiguous') return choose(trx, row, resolution, print, side, named);
  const wanted = side === 'statement_line_id' ? 'statement_only' : 'ledger_only';
  const own = side === 'statement_line_id' ? 'ledger_only' : 'statement_only';
  if (row.category !== own) {
    if (row.category === 'late_completion') throw new DomainError('exception_pair_mismatch', 'a late completion has no other side to pair: explain it', side);
    throw new DomainError('exception_pair_mismatch', `a ${row.category} exception is not paired by ${side}: name ${own === 'ledger_only' ? 'ledger_entry_id for a statement_only' : 'statement_line_id for a ledger_only'} exception, or explain or adjust it`, side);
  }
  const other: ExceptionRow | undefined = await trx('reconciliation_exceptions')
    .where({ partner: row.partner, category: wanted, status: 'open', [side]: named }).forUpdate().first(...EXCEPTION_COLUMNS);
  if (!other) throw new DomainError('exception_pair_mismatch', `no open ${wanted} exception of ${row.partner} has ${side} ${named}`, side);
  if (other.currency !== row.currency) {
    throw new DomainError('exception_pair_mismatch', `the pair's currencies differ: ${row.currency} and ${other.currency}`, 'currency');
  }
  const [ledgerSide, statementSide] = row.category === 'ledger_only' ? [row, other] : [other, row];
  const gap = new Money(ledgerSide.ledger_amount!).minus(statementSide.statement_amount!).abs();
  if (gap.isGreaterThan(row.amount_tolerance)) {
    throw new DomainError('exception_pair_mismatch', `the pair's amounts differ by ${gap.toFixed()}, beyond the tolerance of ${row.amount_tolerance}: the ledger moved ${ledgerSide.ledger_amount}, the line says ${statementSide.statement_amount}`, 'amount');
  }
  await recordHandMatch(trx, {
    partner: row.partner, ledgerEntryIds: [ledgerSide.ledger_entry_id!], statementLineId: statementSide.statement_line_id!,
    reconciliationId: (row.reconciliation_id ?? other.reconciliation_id)!, lineNet: statementSide.statement_amount!, currency: row.currency, at: wallNow(),
  });
  return [await closeException(trx, row, resolution, { counterpart: other.id }, print), await closeException(trx, other, resolution, { counterpart: row.id }, null)];
}

/**
 * The exception a side chosen by hand has of its own: reported alone (ledger_only, statement_only),
 * or itself ambiguous with no other side (a movement of a busy day, unsure which line is its). It
 * closes with the match: left open, adjusting it would take a matched payment off the books again.
 */
const aloneOnItsSide = (side: 'statement_line_id' | 'ledger_entry_id') => (q: Knex.QueryBuilder) =>
  q.where('category', side === 'ledger_entry_id' ? 'ledger_only' : 'statement_only')
    .orWhere((ambiguous) => ambiguous.where('category', 'ambiguous').whereNull(side === 'ledger_entry_id' ? 'statement_line_id' : 'ledger_entry_id'));

/**
 * An ambiguous exception matched by hand: the request names one of its candidates, on the side
 * it lacks. It closes `matched`, its history naming the choice; the candidate's own exception
 * (reported alone, or ambiguous on its side: aloneOnItsSide) closes with it as its counterpart. The
 * candidates are read from the row as a whole, so this reads whatever lists them.
 */
async function choose(trx: Knex.Transaction, row: ExceptionRow, resolution: Resolution, print: string, side: 'statement_line_id' | 'ledger_entry_id', named: string): Promise<ExceptionRow[]> {
  const { rows: [{ candidates }] } = await trx.raw(`SELECT coalesce(to_jsonb(x) -> 'candidates', '[]'::jsonb) AS candidates FROM reconciliation_exceptions x WHERE id = ?`, [row.id]);
  const all = candidates as Array<{ ledger_entry_id: string | null; statement_line_id: string | null; amount: string }>;
  const chosen = all.find((c) => c[side] === named);
  if (!chosen) {
    const listed = all.map((c) => c.ledger_entry_id ?? c.statement_line_id).join(', ');
    throw new DomainError('exception_pair_mismatch', `${side} ${named} is not a candidate of this ambiguous exception: choose one of ${listed || 'none'}`, side);
  }
  const own = side === 'ledger_entry_id' ? row.statement_amount : row.ledger_amount;
  const gap = new Money(chosen.amount).minus(own ?? 0).abs();
  if (gap.isGreaterThan(row.amount_tolerance)) {
    throw new DomainError('exception_pair_mismatch', `the candidate's amount ${chosen.amount} differs from ${own} by ${gap.toFixed()}, beyond the tolerance of ${row.amount_tolerance}`, 'amount');
  }
  const alone: ExceptionRow | undefined = await trx('reconciliation_exceptions')
    .where({ partner: row.partner, status: 'open', [side]: named }).where(aloneOnItsSide(side)).forUpdate().first(...EXCEPTION_COLUMNS);
  const choice = `${resolution.note} (matched with ${side === 'ledger_entry_id' ? 'ledger entry' : 'statement line'} ${named})`;
  const [ledgerEntryId, statementLineId, lineNet] = side === 'ledger_entry_id' ? [named, row.statement_line_id!, row.statement_amount!] : [row.ledger_entry_id!, named, chosen.amount];
  await recordHandMatch(trx, { partner: row.partner, ledgerEntryIds: [ledgerEntryId], statementLineId, reconciliationId: row.reconciliation_id!, lineNet, currency: row.currency, at: wallNow() });
  const closed = await closeException(trx, row, resolution, { counterpart: alone?.id }, print, choice);
  return alone ? [closed, await closeException(trx, alone, resolution, { counterpart: row.id }, null, choice)] : [closed];
}

/**
 * An ambiguous line matched by hand with a set of its candidates (a line ambiguous between sets:
 * 60 + 40 or 50 + 50): every entry named must be a candidate, and their amounts must add up to
 * the line within the report's tolerance. It closes `matched`; each chosen entry's own exception
 * (aloneOnItsSide) closes with it.
 */
async function chooseSet(trx: Knex.Transaction, row: ExceptionRow, resolution: Resolution, print: string, named: string[]): Promise<ExceptionRow[]> {
  if (row.category !== 'ambiguous' || row.statement_line_id === null) {
    throw new DomainError('exception_pair_mismatch', 'ledger_entry_ids names the set an ambiguous line is the sum of: this exception is not one; name ledger_entry_id or statement_line_id', 'ledger_entry_ids');
  }
  const { rows: [{ candidates }] } = await trx.raw(`SELECT coalesce(to_jsonb(x) -> 'candidates', '[]'::jsonb) AS candidates FROM reconciliation_exceptions x WHERE id = ?`, [row.id]);
  const all = candidates as Array<{ ledger_entry_id: string | null; amount: string }>;
  const strangers = named.filter((id) => !all.some((c) => c.ledger_entry_id === id));
  if (strangers.length > 0) {
    throw new DomainError('exception_pair_mismatch', `ledger_entry_ids ${strangers.join(', ')} ${strangers.length === 1 ? 'is not a candidate' : 'are not candidates'} of this ambiguous exception: choose among ${all.map((c) => c.ledger_entry_id).join(', ') || 'none'}`, 'ledger_entry_ids');
  }
  const sum = named.reduce((total, id) => total.plus(all.find((c) => c.ledger_entry_id === id)!.amount), new Money(0));
  const gap = sum.minus(row.statement_amount ?? 0).abs();
  if (gap.isGreaterThan(row.amount_tolerance)) {
    throw new DomainError('exception_pair_mismatch', `the set chosen adds up to ${sum.toFixed()}, ${gap.toFixed()} from the line's ${row.statement_amount}, beyond the tolerance of ${row.amount_tolerance}`, 'amount');
  }
  await recordHandMatch(trx, { partner: row.partner, ledgerEntryIds: named, statementLineId: row.statement_line_id, reconciliationId: row.reconciliation_id!, lineNet: row.statement_amount!, currency: row.currency, at: wallNow() });
  const choice = `${resolution.note} (matched with ledger entries ${named.join(', ')})`;
  const closed = [await closeException(trx, row, resolution, {}, print, choice)];
  const alone: ExceptionRow[] = await trx('reconciliation_exceptions')
    .where({ partner: row.partner, status: 'open' }).whereIn('ledger_entry_id', named).where(aloneOnItsSide('ledger_entry_id')).forUpdate().select(...EXCEPTION_COLUMNS);
  for (const one of alone) closed.push(await closeException(trx, one, resolution, { counterpart: row.id }, null, choice));
  return closed;
}
