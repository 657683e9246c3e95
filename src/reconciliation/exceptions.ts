// Where finance works the exceptions (DESIGN.md section 5e): the queue, oldest first, and the
// three resolutions. `matched` pairs a movement reported alone with a line reported alone, by
// hand; `explained` moves no money; `adjusted` has the ledger post the difference between the
// partner's settlement account and suspense, and records the entry. Each resolution locks the
// exceptions it closes, records who and when, and announces itself in the same transaction.
//
// A resolution has one outcome. An adjustment waits on the ledger, whose answer may come late,
// so it moves the exception `open → resolving → resolved`, each step under the row's lock and in
// a transaction of its own: while `resolving`, the request in flight is recorded and nothing but
// that same request resolves it (another is 409 `exception_resolving`); the same request again
// (its Idempotency-Key, or another key with the same body) finishes it or answers the resolution
// it made. No transaction stays open while the ledger is asked.
import type { Knex } from 'knex';
import { createHash, randomUUID } from 'node:crypto';
import { formatAmount, isCurrency } from '../../ledger/money';
import { writeOutboxRound } from '../outbox/rounds';
import type { Page, PageRequest } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { derivedUuid } from '../idempotency/derived-ids';
import { TOPICS } from '../kafka/topics';
import { type LedgerClient } from '../ledger-client/client';
import { publishRound } from '../outbox/publish-round';
import type { Runtime } from '../runtime';
import { csvRow } from '../statements/formats';
import { closeException, matchByHand, type Resolution } from './hand-matches';
import {
    differenceOf, EXCEPTION_COLUMNS, historyEntry, resolvedEvent, viewOfException,
    type ExceptionCategory, type ExceptionRow, type ExceptionStatus, type ExceptionView, type PendingResolution,
} from './run-exceptions';
import { wallNow } from '../clock';

/** `from` inclusive, `to` exclusive: the route turns a calendar date in `to` into the start of the next day. */
export interface ExceptionFilter { partner?: string; status?: ExceptionStatus; category?: ExceptionCategory; from?: Date; to?: Date }

export type { Resolution } from './hand-matches';

/** The adjusting entry of an exception: one per exception, however often it is asked for. */
export const adjustmentEntryId = (exceptionId: string) => derivedUuid('reconciliation-adjustment-entry', exceptionId);

/** What makes two resolve requests the same request: their body, not who sent it or under which key. */
export function resolutionFingerprint(r: Omit<Resolution, 'by'>): string {
  // A set is appended only when named: the fingerprints of the requests before sets stay as they were.
  const named = [r.resolution, r.note, r.statementLineId ?? null, r.ledgerEntryId ?? null, ...(r.ledgerEntryIds ? [r.ledgerEntryIds] : [])];
  return createHash('sha256').update(JSON.stringify(named)).digest('hex');
}

/** The columns of the queue as CSV, in this order. */
export const EXCEPTION_CSV_COLUMNS = [
  'id', 'created_at', 'partner', 'category', 'status', 'reference', 'currency', 'ledger_entry_id', 'statement_line_id', 'ledger_amount', 'statement_amount',
  'field', 'ledger_value', 'statement_value', 'reason', 'resolution', 'note', 'resolved_by', 'resolved_at', 'adjustment_entry_id', 'counterpart_exception_id',
  'reverses_exception_id', 'reconciliation_id', 'transfer_id',
] as const;

/** What the locked row asks for next. */
type Step = { kind: 'answered'; row: ExceptionRow } | { kind: 'closed'; closed: ExceptionRow[]; roundId: string; events: ReturnType<typeof resolvedEvent>[] }
  | { kind: 'adjusting'; row: ExceptionRow; pending: PendingResolution };

export class ExceptionDesk {
  constructor(private readonly runtime: Runtime, private readonly ledger: LedgerClient, private readonly replyTimeoutMs: number) {}

  private filtered(filter: ExceptionFilter): Knex.QueryBuilder {
    const query = this.runtime.db('reconciliation_exceptions').select(...EXCEPTION_COLUMNS, 'seq');
    if (filter.partner) query.where('partner', filter.partner);
    if (filter.status) query.where('status', filter.status);
    if (filter.category) query.where('category', filter.category);
    if (filter.from) query.where('created_at', '>=', filter.from);
    if (filter.to) query.where('created_at', '<', filter.to);
    return query;
  }

  /**
   * Oldest first, keyset on `seq`. The cursor is found among all exceptions, not among those the
   * filter keeps: the last item of a page of `status=open` may be resolved before the next page
   * is asked for, and the next page still goes on after it.
   */
  async list(page: PageRequest, filter: ExceptionFilter): Promise<Page<ExceptionView>> {
    if (page.before !== undefined && page.offset !== undefined) throw new DomainError('invalid_request', 'give before or offset, not both', 'offset');
    const query = this.filtered(filter);
    if (page.before) {
      const cursor: { seq: string } | undefined = await this.runtime.db('reconciliation_exceptions').where('id', page.before).first('seq');
      if (!cursor) throw new DomainError('invalid_request', 'before names no item of this list', 'before');
      query.where('seq', '>', cursor.seq);
    }
    if (page.offset) query.offset(page.offset);
    const rows: Array<ExceptionRow & { seq: string }> = await query.orderBy('seq', 'asc').limit(page.limit + 1);
    const has_more = rows.length > page.limit;
    const kept = (has_more ? rows.slice(0, page.limit) : rows).map(({ seq, ...row }) => { void seq; return viewOfException(row); });
    return { data: kept, has_more, next_cursor: has_more ? kept[kept.length - 1].id : null };
  }

  /** Every exception the filter keeps, oldest first, as CSV with a header row, read in bounded chunks. */
  async *listCsv(filter: ExceptionFilter, chunk = 2000): AsyncGenerator<string> {
    yield `${EXCEPTION_CSV_COLUMNS.join(',')}\n`;
    for (let after = '0'; ;) {
      const rows: Array<ExceptionRow & { seq: string }> = await this.filtered(filter).where('seq', '>', after).orderBy('seq', 'asc').limit(chunk);
      if (rows.length === 0) return;
      yield rows.map((row) => csvRow(EXCEPTION_CSV_COLUMNS, viewOfException(row))).join('');
      after = rows[rows.length - 1].seq;
    }
  }

  async get(id: string): Promise<ExceptionView> {
    const row = await this.runtime.db('reconciliation_exceptions').where('id', id).first(...EXCEPTION_COLUMNS);
    if (!row) throw new DomainError('reconciliation_exception_not_found', `no reconciliation exception ${id}`, 'id');
    return viewOfException(row as ExceptionRow);
  }

  async resolve(id: string, resolution: Resolution): Promise<ExceptionView> {
    const print = resolutionFingerprint(resolution);
    const step: Step = await this.runtime.db.transaction((trx) => this.decide(trx, id, resolution, print));
    if (step.kind === 'answered') return viewOfException(step.row);
    if (step.kind === 'closed') {
      await publishRound(this.runtime, step.roundId, step.events);
      return viewOfException(step.closed[0]);
    }
    return this.finishAdjustment(step.row, step.pending);
  }

  /** Under the row's lock: answers a request already answered, closes what needs no ledger, or marks an adjustment in flight. */
  private async decide(trx: Knex.Transaction, id: string, resolution: Resolution, print: string): Promise<Step> {
    const row = await this.locked(trx, id);
    if (row.status === 'resolved') {
      if (row.resolution_fingerprint === print) return { kind: 'answered', row };
      throw new DomainError('exception_already_resolved', `the exception was resolved (${row.resolution}) at ${row.resolved_at!.toISOString()} by ${row.resolved_by}`, 'id');
    }
    if (row.status === 'resolving') {
      const pending = row.pending_resolution!;
      if (pending.fingerprint === print) return { kind: 'adjusting', row, pending };
      throw new DomainError('exception_resolving', `an adjustment of ${pending.amount} asked by ${pending.by} at ${pending.at} is in flight through the ledger: repeat that request to finish it; nothing else resolves the exception meanwhile`, 'id');
    }
    // An adjusting entry posted for this exception (its answer lost before it was recorded)
    // decides the resolution: the money has moved.
    const posted = await trx('journal_entries').where('id', adjustmentEntryId(row.id)).first('id');
    if (posted && resolution.resolution !== 'adjusted') {
      throw new DomainError('exception_already_resolved', `the adjusting entry ${posted.id} was posted for this exception: resolve it as adjusted to record it`, 'resolution');
    }
    if (resolution.resolution === 'adjusted') return this.startAdjustment(trx, row, resolution, print);
    const closed = resolution.resolution === 'explained' ? [await closeException(trx, row, resolution, {}, print)] : await matchByHand(trx, row, resolution, print);
    const roundId = randomUUID();
    const events = closed.map((one) => resolvedEvent(one, this.runtime.config.environment, null));
    await this.announce(trx, roundId, events);
    return { kind: 'closed', closed, roundId, events };
  }

  private async announce(trx: Knex.Transaction, roundId: string, events: ReturnType<typeof resolvedEvent>[]): Promise<void> {
    await writeOutboxRound(trx, roundId, events.map((event) => ({ id: event.id, topic: TOPICS.domainEvents, key: event.resource_id, accountId: null, payload: event })));
  }

  /** The exception, locked. */
  private async locked(trx: Knex.Transaction, id: string): Promise<ExceptionRow> {
    const row: ExceptionRow | undefined = await trx('reconciliation_exceptions').where('id', id).forUpdate().first(...EXCEPTION_COLUMNS);
    if (!row) throw new DomainError('reconciliation_exception_not_found', `no reconciliation exception ${id}`, 'id');
    return row;
  }

  /** `open → resolving`: what the adjustment posts is fixed now, and recorded with the request that asked for it. */
  private async startAdjustment(trx: Knex.Transaction, row: ExceptionRow, resolution: Resolution, print: string): Promise<Step> {
    if (row.category === 'late_completion') {
      throw new DomainError('nothing_to_adjust', `the late completion moved its money through the ledger already (${row.reheld_amount} held again, ${row.receivable_amount} owed through sys:receivable:late_completion:${row.currency}): explain it`, 'resolution');
    }
    const difference = differenceOf(row);
    if (difference === null || !isCurrency(row.currency)) {
      throw new DomainError('nothing_to_adjust', `the sides do not disagree on an amount (${row.category}${row.field ? ` on ${row.field}` : ''}): explain it, or match it by hand`, 'resolution');
    }
    const at = wallNow();
    const pending: PendingResolution = {
      fingerprint: print, resolution: 'adjusted', note: resolution.note, by: resolution.by, entry_id: adjustmentEntryId(row.id), amount: formatAmount(difference, row.currency), at: at.toISOString(),
    };
    const [marked]: ExceptionRow[] = await trx('reconciliation_exceptions').where({ id: row.id, status: 'open' }).update({
      status: 'resolving', pending_resolution: JSON.stringify(pending),
      history: trx.raw('history || ?::jsonb', [historyEntry(at, 'resolving', resolution.by, `adjusting ${pending.amount} ${row.currency} through the ledger: ${resolution.note}`)]),
    }, [...EXCEPTION_COLUMNS]);
    return { kind: 'adjusting', row: marked, pending };
  }

  /** Asks the ledger (again: its command id is the exception's) and records what it decided. */
  private async finishAdjustment(row: ExceptionRow, pending: PendingResolution): Promise<ExceptionView> {
    // An entry already posted is the ledger's decision; asking again would only wait for it.
    const posted = await this.runtime.db('journal_entries').where('id', pending.entry_id).first('id');
    if (!posted) {
      const decision = await this.ledger.execute('reconciliation.adjust', derivedUuid('reconciliation-adjustment', row.id), `reconciliation:${row.partner}`,
        { exception_id: row.id, entry_id: pending.entry_id, partner: row.partner, currency: row.currency, amount: pending.amount }, this.replyTimeoutMs);
      if (!decision) {
        throw new DomainError('service_unavailable', 'the ledger has not posted the adjustment yet; the exception is resolving: repeat the request (the same Idempotency-Key or the same body) to finish it', 'ledger', { 'Retry-After': '2' });
      }
      if (decision.outcome.kind === 'refused') {
        const message = decision.outcome.message;
        await this.runtime.db.transaction(async (trx) => {
          const now = await this.locked(trx, row.id);
          if (now.status !== 'resolving') return;
          const at = wallNow();
          await trx('reconciliation_exceptions').where({ id: row.id }).update({
            status: 'open', pending_resolution: null, history: trx.raw('history || ?::jsonb', [historyEntry(at, 'reopened', 'ledger', `the ledger refused the adjustment: ${message}`)]),
          });
          // A reversal opened while the adjustment was in flight (its line arrived) would reverse
          // money that never moved: it closes, explained; the reopened exception is settled as any.
          const why = `the adjustment of exception ${row.id} it would reverse was refused by the ledger: nothing to reverse`;
          await trx('reconciliation_exceptions').where({ reverses_exception_id: row.id, status: 'open' }).update({
            status: 'resolved', resolution: 'explained', note: why, resolved_by: 'ledger', resolved_at: at,
            history: trx.raw('history || ?::jsonb', [historyEntry(at, 'resolved', 'ledger', why)]),
          });
        });
        throw new DomainError('nothing_to_adjust', message, 'resolution');
      }
    }
    const roundId = randomUUID();
    const step = await this.runtime.db.transaction(async (trx): Promise<{ closed: ExceptionRow; events: ReturnType<typeof resolvedEvent>[] }> => {
      const now = await this.locked(trx, row.id);
      if (now.status === 'resolved') return { closed: now, events: [] }; // a retry running beside this one recorded it
      const closed = await closeException(trx, now, pending, { entry: pending.entry_id }, pending.fingerprint);
      const events = [resolvedEvent(closed, this.runtime.config.environment, pending.amount)];
      await this.announce(trx, roundId, events);
      return { closed, events };
    });
    if (step.events.length > 0) await publishRound(this.runtime, roundId, step.events);
    return viewOfException(step.closed);
  }
}
