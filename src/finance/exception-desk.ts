// Where finance works the exceptions (DESIGN.md section 5e): the queue, oldest first, and the
// three resolutions. `matched` pairs a movement reported alone with a line reported alone, by
// hand; `explained` moves no money; `adjusted` has the ledger post the difference between the
// partner's settlement account and suspense, and records the entry. Each resolution locks the
// exceptions it closes, records who and when, and announces itself in the same transaction.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { formatAmount, isCurrency, Money, type Amount } from '../../ledger/money';
import { writeOutboxRound } from '../../ledger/store';
import { publishRound } from '../announce';
import { keysetPage, type Page, type PageRequest } from '../db/pagination';
import { DomainError } from '../errors';
import { TOPICS } from '../kafka/topics';
import { derivedUuid, type LedgerClient } from '../ledger-client';
import type { Runtime } from '../runtime';
import { EXCEPTION_COLUMNS, resolvedEvent, viewOfException, type ExceptionResolution, type ExceptionRow, type ExceptionView } from './exceptions';

export interface ExceptionFilter { partner?: string; status?: 'open' | 'resolved'; from?: Date; to?: Date }

export interface Resolution {
  resolution: ExceptionResolution;
  note: string;
  /** matched: the other side, itself an open exception of the same partner and currency. */
  statementLineId?: string;
  ledgerEntryId?: string;
  /** Who resolves: the credential, never its secret. */
  by: string;
}

/** The adjusting entry of an exception: one per exception, however often it is asked for. */
export const adjustmentEntryId = (exceptionId: string) => derivedUuid('reconciliation-adjustment-entry', exceptionId);

/**
 * statement − ledger, as the partner sees it; null when the sides do not disagree on an amount.
 * A late completion has nothing to adjust: the ledger completed it in balanced entries, and what
 * the sender's balance did not cover sits on the late-completion receivable, a claim on the
 * sender, not a difference with the partner; finance explains it.
 */
function differenceOf(row: ExceptionRow): Amount | null {
  if (row.category === 'late_completion') return null;
  if (row.category === 'mismatched' && row.field !== 'amount' && row.field !== 'fee') return null;
  const difference = new Money(row.statement_amount ?? 0).minus(row.ledger_amount ?? 0);
  return difference.isZero() ? null : difference;
}

export class ExceptionDesk {
  constructor(private readonly runtime: Runtime, private readonly ledger: LedgerClient, private readonly replyTimeoutMs: number) {}

  list(page: PageRequest, filter: ExceptionFilter): Promise<Page<ExceptionView>> {
    const query = this.runtime.db('reconciliation_exceptions').select(...EXCEPTION_COLUMNS, 'seq');
    if (filter.partner) query.where('partner', filter.partner);
    if (filter.status) query.where('status', filter.status);
    if (filter.from) query.where('created_at', '>=', filter.from);
    if (filter.to) query.where('created_at', '<', filter.to);
    return keysetPage(query, 'reconciliation_exceptions', page, ({ seq, ...row }: ExceptionRow & { seq: string }) => { void seq; return viewOfException(row); }, ['seq'], 'asc');
  }

  async get(id: string): Promise<ExceptionView> {
    const row = await this.runtime.db('reconciliation_exceptions').where('id', id).first(...EXCEPTION_COLUMNS);
    if (!row) throw new DomainError('reconciliation_exception_not_found', `no reconciliation exception ${id}`, 'id');
    return viewOfException(row as ExceptionRow);
  }

  async resolve(id: string, resolution: Resolution): Promise<ExceptionView> {
    const roundId = randomUUID();
    const environment = this.runtime.config.environment;
    const { closed, events } = await this.runtime.db.transaction(async (trx) => {
      const { closed, adjustment } = await this.decide(trx, await this.lockOpen(trx, id), resolution);
      const announced = closed.map((row) => resolvedEvent(row, environment, row.id === id ? adjustment : null));
      await writeOutboxRound(trx, roundId, announced.map((event) => ({ id: event.id, topic: TOPICS.domainEvents, key: event.resource_id, accountId: null, payload: event })), announced[0].created_at);
      return { closed, events: announced };
    });
    await publishRound(this.runtime, roundId, events);
    return viewOfException(closed[0]);
  }

  private async decide(trx: Knex.Transaction, exception: ExceptionRow, resolution: Resolution): Promise<{ closed: ExceptionRow[]; adjustment: string | null }> {
    // An adjusting entry posted for this exception (its answer lost before it was recorded)
    // decides the resolution: the money has moved.
    const posted = await trx('journal_entries').where('id', adjustmentEntryId(exception.id)).first('id');
    if (posted && resolution.resolution !== 'adjusted') {
      throw new DomainError('exception_already_resolved', `the adjusting entry ${posted.id} was posted for this exception: resolve it as adjusted to record it`, 'resolution');
    }
    switch (resolution.resolution) {
      case 'explained': return { closed: [await this.close(trx, exception, resolution, {})], adjustment: null };
      case 'matched': return { closed: await this.pair(trx, exception, resolution), adjustment: null };
      case 'adjusted': return this.adjust(trx, exception, resolution);
    }
  }

  /** The exception, locked; a resolved one is a 409. */
  private async lockOpen(trx: Knex.Transaction, id: string): Promise<ExceptionRow> {
    const row: ExceptionRow | undefined = await trx('reconciliation_exceptions').where('id', id).forUpdate().first(...EXCEPTION_COLUMNS);
    if (!row) throw new DomainError('reconciliation_exception_not_found', `no reconciliation exception ${id}`, 'id');
    if (row.status !== 'open') {
      throw new DomainError('exception_already_resolved', `the exception was resolved (${row.resolution}) at ${row.resolved_at!.toISOString()} by ${row.resolved_by}`, 'id');
    }
    return row;
  }

  private async close(trx: Knex.Transaction, row: ExceptionRow, resolution: Resolution, links: { counterpart?: string; entry?: string }): Promise<ExceptionRow> {
    const [closed]: ExceptionRow[] = await trx('reconciliation_exceptions').where({ id: row.id, status: 'open' }).update({
      status: 'resolved', resolution: resolution.resolution, note: resolution.note, resolved_by: resolution.by, resolved_at: new Date(),
      counterpart_exception_id: links.counterpart ?? null, adjustment_entry_id: links.entry ?? null,
    }, [...EXCEPTION_COLUMNS]);
    return closed;
  }

  /** A movement reported alone paired by hand with a line reported alone: both close. */
  private async pair(trx: Knex.Transaction, row: ExceptionRow, resolution: Resolution): Promise<ExceptionRow[]> {
    const side = resolution.statementLineId !== undefined ? 'statement_line_id' : 'ledger_entry_id';
    const named = resolution.statementLineId ?? resolution.ledgerEntryId!;
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
    return [await this.close(trx, row, resolution, { counterpart: other.id }), await this.close(trx, other, resolution, { counterpart: row.id })];
  }

  /** The ledger posts the difference between settlement and suspense; the exception names the entry. */
  private async adjust(trx: Knex.Transaction, row: ExceptionRow, resolution: Resolution): Promise<{ closed: ExceptionRow[]; adjustment: string }> {
    const difference = differenceOf(row);
    if (row.category === 'late_completion') {
      throw new DomainError('nothing_to_adjust', `the late completion moved its money through the ledger already (${row.reheld_amount} held again, ${row.receivable_amount} owed through sys:receivable:late_completion:${row.currency}): explain it`, 'resolution');
    }
    if (difference === null || !isCurrency(row.currency)) {
      throw new DomainError('nothing_to_adjust', `the sides do not disagree on an amount (${row.category}${row.field ? ` on ${row.field}` : ''}): explain it, or match it by hand`, 'resolution');
    }
    const entryId = adjustmentEntryId(row.id);
    const amount = formatAmount(difference, row.currency);
    const decision = await this.ledger.execute('reconciliation.adjust', derivedUuid('reconciliation-adjustment', row.id), `reconciliation:${row.partner}`,
      { exception_id: row.id, entry_id: entryId, partner: row.partner, currency: row.currency, amount }, this.replyTimeoutMs);
    if (!decision) {
      throw new DomainError('service_unavailable', 'the ledger has not posted the adjustment yet; repeat the request with the same Idempotency-Key', 'ledger', { 'Retry-After': '2' });
    }
    if (decision.outcome.kind === 'refused') throw new DomainError('nothing_to_adjust', decision.outcome.message, 'resolution');
    return { closed: [await this.close(trx, row, resolution, { entry: entryId })], adjustment: amount };
  }
}
