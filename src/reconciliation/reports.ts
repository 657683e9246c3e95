// Reconciliation runs (DESIGN.md section 5e): stage both sides and match them (run.ts), and
// store the report with its items, its exceptions and its events in one transaction, so a report
// is either whole with its events or absent. A dry run stores and announces nothing. A run sent
// with an Idempotency-Key keeps it: the same key and request again answer the stored report
// (no second report, no second events), another request under the key is 409.
import type { Knex } from 'knex';
import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { Money } from '../../ledger/money';
import { writeOutboxRound } from '../outbox/rounds';
import { keysetPage, type Page, type PageRequest } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { idempotencyConflict } from '../idempotency/key-reservations';
import { publishRound } from '../outbox/publish-round';
import { TOPICS } from '../kafka/topics';
import { log } from '../log';
import type { PartnerClient } from '../partners/client';
import type { PartnerSlug } from '../partners/registry';
import type { Runtime } from '../runtime';
import { csvRow } from '../statements/formats';
import { ITEM_CATEGORIES, type CurrencyTotals, type ItemCategory, type ReportItem } from './match';
import { recordMatches } from './matches';
import { addDays, daysOf, LOOKAROUND_DAYS, statementDays } from './partner-statements';
import { ITEM_COLUMNS, reconcileStaged, type StagedReport } from './run';
import { SEARCH_BUDGET, type RunBudget } from './run-leftovers';
import { openedEvent, recordExceptions, resolvedEvent } from './run-exceptions';
import { statementCsvChunks } from './statement-csv';
import { wallNow } from '../clock';

export const RANGE_DAYS_MAX = 31;
/** Items of a report shown in its JSON form; the CSV form has them all. */
export const ITEMS_SHOWN_MAX = 1000;

export interface ReconcileRequest {
  partner: PartnerSlug;
  from: string;
  to: string;
  dryRun: boolean;
  amountTolerance: string;
  dateToleranceDays: number;
  /** An uploaded statement; null: fetch the partner's. */
  statementCsv: string | null;
  trigger: 'api' | 'schedule';
  /** The client's Idempotency-Key, if it sent one. */
  idempotencyKey?: string | null;
}

/** What makes two runs the same request: everything asked, the uploaded statement by its digest. */
function requestFingerprint(request: ReconcileRequest): string {
  const statement = request.statementCsv === null ? null : createHash('sha256').update(request.statementCsv).digest('hex');
  return createHash('sha256').update(JSON.stringify([request.partner, request.from, request.to, request.dryRun, request.amountTolerance, request.dateToleranceDays, statement])).digest('hex');
}

export interface ReconciliationView {
  id: string;
  status: 'completed';
  dry_run: boolean;
  partner: string;
  from: string;
  to: string;
  trigger: 'api' | 'schedule';
  source: 'partner' | 'upload';
  amount_tolerance: string;
  date_tolerance_days: number;
  created_at: string;
  summary: Record<ItemCategory, number>;
  totals: CurrencyTotals[];
  /** Statement lines the run's search budget did not reach: reported not_examined, never matched. */
  not_examined: number;
  /** Exceptions this run opened, and earlier ones its matching settled (none for a dry run). */
  exceptions: ExceptionCounts;
  /** The items that are not matched, in report order, at most ITEMS_SHOWN_MAX of them. */
  items: ReportItem[];
  items_omitted: number;
}

export interface ExceptionCounts { opened: number; resolved: number }

interface ReconciliationRow {
  id: string; partner: string; from_date: string; to_date: string; trigger: 'api' | 'schedule'; source: 'partner' | 'upload';
  amount_tolerance: string; date_tolerance_days: number; summary: Record<ItemCategory, number>; totals: CurrencyTotals[]; created_at: Date;
  exceptions: ExceptionCounts; not_examined: number;
  idempotency_key?: string | null; request_fingerprint?: string | null;
}

const exceptionCount = (row: ReconciliationRow) => ITEM_CATEGORIES.reduce((n, c) => n + (c === 'matched' ? 0 : row.summary[c] ?? 0), 0);
const emptySummary = () => Object.fromEntries(ITEM_CATEGORIES.map((c) => [c, 0])) as Record<ItemCategory, number>;

/** The first unmatched items of a stored report, in report order. */
function shownExceptions(db: Knex, id: string): Promise<ReportItem[]> {
  return db('reconciliation_items').where('reconciliation_id', id).whereNot('category', 'matched').orderBy('seq').limit(ITEMS_SHOWN_MAX).select(...ITEM_COLUMNS, 'movements', 'candidates');
}

function checkRange(from: string, to: string): void {
  if (from > to) throw new DomainError('invalid_request', 'from must not be after to', 'from');
  if (daysOf(from, to).length > RANGE_DAYS_MAX) throw new DomainError('invalid_request', `a reconciliation covers at most ${RANGE_DAYS_MAX} days`, 'to');
}

/** A report as lists show it: everything but its items. */
export type ReconciliationSummary = Omit<ReconciliationView, 'items' | 'items_omitted'>;

function summaryOf(row: ReconciliationRow, dryRun = false): ReconciliationSummary {
  return {
    id: row.id, status: 'completed', dry_run: dryRun, partner: row.partner, from: row.from_date, to: row.to_date, trigger: row.trigger, source: row.source,
    amount_tolerance: row.amount_tolerance, date_tolerance_days: row.date_tolerance_days, created_at: row.created_at.toISOString(),
    // A report stored before a category existed counts none of it.
    summary: { ...emptySummary(), ...row.summary }, totals: row.totals, not_examined: row.not_examined, exceptions: row.exceptions,
  };
}

function viewOf(row: ReconciliationRow, dryRun: boolean, exceptions: ReportItem[], exceptionCount: number): ReconciliationView {
  return { ...summaryOf(row, dryRun), items: exceptions.slice(0, ITEMS_SHOWN_MAX), items_omitted: Math.max(0, exceptionCount - ITEMS_SHOWN_MAX) };
}

export class Reconciliations {
  constructor(
    private readonly runtime: Runtime, private readonly clients: (partner: PartnerSlug) => PartnerClient,
    /** The search's budget of each run (SEARCH_BUDGET). */
    private readonly budget: RunBudget = SEARCH_BUDGET,
  ) {}

  /**
   * Runs one reconciliation; null when it was the schedule's and another process has already
   * reconciled that day. Everything happens in one transaction: the report, its items, its
   * exceptions and its events commit together, or (a dry run, a partner that fails) not at all.
   */
  async run(request: ReconcileRequest): Promise<ReconciliationView | null> {
    return (await this.answer(request))?.view ?? null;
  }

  /** As run, saying whether the answer is the stored report of the request's Idempotency-Key. */
  async answer(request: ReconcileRequest): Promise<{ view: ReconciliationView; replayed: boolean } | null> {
    checkRange(request.from, request.to);
    const print = request.idempotencyKey ? requestFingerprint(request) : null;
    // A key already answered needs no statement: the stored report is the answer.
    if (request.idempotencyKey) {
      const replay = await this.replayed(request.idempotencyKey, print!);
      if (replay) return { view: replay, replayed: true };
    }
    const uploaded = request.statementCsv === null ? null : statementCsvChunks(request.statementCsv);
    // Both sides are read in full over the range and twice its date tolerance: a pair the report
    // shows has a side in the range, so its other side lies within one tolerance of it, and every
    // other candidate of either side within two; read narrower, a line of the day after the range
    // met one movement of its amount in the range and was matched with it by amount and date,
    // while its own movement, one more day on, went unseen. A line further off meets its movement
    // by reference, up to LOOKAROUND_DAYS away; a movement whose line comes later stays ledger_only
    // until the run of that line's day pairs it (and closes the exception).
    const nearFrom = addDays(request.from, -2 * request.dateToleranceDays);
    const nearTo = addDays(request.to, 2 * request.dateToleranceDays);
    const wideFrom = addDays(request.from, -LOOKAROUND_DAYS);
    const wideTo = addDays(request.to, LOOKAROUND_DAYS);
    const row: ReconciliationRow = {
      id: randomUUID(), partner: request.partner, from_date: request.from, to_date: request.to, trigger: request.trigger, source: uploaded ? 'upload' : 'partner',
      amount_tolerance: request.amountTolerance, date_tolerance_days: request.dateToleranceDays, summary: emptySummary(),
      totals: [], created_at: wallNow(), exceptions: { opened: 0, resolved: 0 }, not_examined: 0,
      idempotency_key: request.dryRun ? null : request.idempotencyKey ?? null, request_fingerprint: print,
    };
    const lines = uploaded ?? statementDays(this.clients(request.partner), request.partner, nearFrom, nearTo);
    const rules = { from: request.from, to: request.to, amountTolerance: new Money(request.amountTolerance), dateToleranceDays: request.dateToleranceDays };
    const roundId = randomUUID();
    const trx = await this.runtime.db.transaction();
    let answer: { view: ReconciliationView; events: DomainEventEnvelope[] } | null;
    try {
      answer = await this.runIn(trx, row, request.dryRun, roundId, () => reconcileStaged(trx, { reconciliationId: row.id, partner: row.partner, nearFrom, nearTo, wideFrom, wideTo, rules, budget: this.budget, uploaded: uploaded !== null }, lines));
      if (answer && !request.dryRun) await trx.commit();
      else await trx.rollback(); // a dry run stores and announces nothing
    } catch (error) {
      await trx.rollback().catch(() => undefined);
      throw error;
    }
    if (!answer) {
      // The key was taken by a run that committed meanwhile (the insert waited for it): its report is the answer.
      if (request.idempotencyKey && !request.dryRun) return { view: (await this.replayed(request.idempotencyKey, print!))!, replayed: true };
      return null;
    }
    if (!request.dryRun) await publishRound(this.runtime, roundId, answer.events);
    return { view: answer.view, replayed: false };
  }

  /** The stored report of a key, or undefined; another request under the key is 409. */
  private async replayed(key: string, print: string): Promise<ReconciliationView | undefined> {
    const stored: { id: string; request_fingerprint: string } | undefined = await this.runtime.db('reconciliations').where('idempotency_key', key).first('id', 'request_fingerprint');
    if (!stored) return undefined;
    if (stored.request_fingerprint !== print) {
      throw idempotencyConflict();
    }
    return this.get(stored.id);
  }

  private async runIn(trx: Knex.Transaction, row: ReconciliationRow, dryRun: boolean, roundId: string, match: () => Promise<StagedReport>): Promise<{ view: ReconciliationView; events: DomainEventEnvelope[] } | null> {
    // Day windows are UTC whatever the database's time zone: a calendar date compared with a
    // timestamptz is its 00:00 in the session's zone, so the run's session says UTC explicitly.
    await trx.raw(`SET LOCAL TIME ZONE 'UTC'`);
    if (!(await this.insert(trx, row))) return null;
    // One run of a partner at a time: each reads the matches the one before it recorded, so no
    // side is matched by two runs.
    await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`reconciliation:${row.partner}`]);
    const report = await match();
    row.summary = report.summary;
    row.totals = report.totals;
    row.not_examined = report.notExamined;
    if (!dryRun) {
      const started = performance.now();
      await recordMatches(trx, row, report.priorItems);
      const matchesMs = Math.round(performance.now() - started);
      const recorded = await recordExceptions(trx, row);
      log.info({ reconciliation: row.id, ms: { matches: matchesMs, exceptions: Math.round(performance.now() - started) - matchesMs } }, 'reconciliation recorded');
      row.exceptions = { opened: recorded.opened.length, resolved: recorded.resolved.length };
      const environment = this.runtime.config.environment;
      const events = [
        this.completedEvent(row), ...recorded.resolved.map((exception) => resolvedEvent(exception, environment, null)),
        ...recorded.opened.map((exception) => openedEvent(exception, environment)),
      ];
      await trx('reconciliations').where('id', row.id).update({ summary: JSON.stringify(row.summary), totals: JSON.stringify(row.totals), exceptions: JSON.stringify(row.exceptions), not_examined: row.not_examined });
      await writeOutboxRound(trx, roundId, events.map((event) => ({ id: event.id, topic: TOPICS.domainEvents, key: event.resource_id, accountId: null, payload: event })));
      return { view: viewOf(row, false, await shownExceptions(trx, row.id), exceptionCount(row)), events };
    }
    return { view: viewOf(row, true, await shownExceptions(trx, row.id), exceptionCount(row)), events: [] };
  }

  /** Inserts the report's row; false for a scheduled day already reconciled, or a key another run has taken. */
  private async insert(trx: Knex.Transaction, row: ReconciliationRow): Promise<boolean> {
    const { rows } = await trx.raw(
      `INSERT INTO reconciliations (id, partner, from_date, to_date, trigger, source, amount_tolerance, date_tolerance_days, summary, totals, created_at, idempotency_key, request_fingerprint)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?)
       ON CONFLICT DO NOTHING RETURNING id`,
      [row.id, row.partner, row.from_date, row.to_date, row.trigger, row.source, row.amount_tolerance, row.date_tolerance_days,
        JSON.stringify(row.summary), JSON.stringify(row.totals), row.created_at, row.idempotency_key ?? null, row.request_fingerprint ?? null],
    );
    return rows.length === 1;
  }

  private completedEvent(row: ReconciliationRow): DomainEventEnvelope {
    return {
      id: randomUUID(), type: 'reconciliation.completed', created_at: row.created_at.toISOString(), environment: this.runtime.config.environment,
      resource_type: 'reconciliation', resource_id: row.id, account_id: null, account_seq: 0,
      data: {
        id: row.id, status: 'completed', amount: null, currency: null,
        attributes: JSON.stringify({
          partner: row.partner, from: row.from_date, to: row.to_date, trigger: row.trigger, source: row.source, ...row.summary, not_examined: row.not_examined,
          exceptions_opened: row.exceptions.opened, exceptions_resolved: row.exceptions.resolved,
        }),
      },
    };
  }

  async get(id: string): Promise<ReconciliationView> {
    const row = await this.rowOf(id);
    return viewOf(row, false, await shownExceptions(this.runtime.db, id), exceptionCount(row));
  }

  /** Stored reports, newest first, of one partner or all. */
  list(page: PageRequest, partner?: string): Promise<Page<ReconciliationSummary>> {
    const query = this.rows();
    if (partner) query.where('partner', partner);
    return keysetPage(query, 'reconciliations', page, (row: ReconciliationRow) => summaryOf(row));
  }

  /** The reports' rows, their days as YYYY-MM-DD. */
  private rows(): Knex.QueryBuilder {
    const { db } = this.runtime;
    return db('reconciliations').select('*', db.raw(`to_char(from_date, 'YYYY-MM-DD') AS from_date`), db.raw(`to_char(to_date, 'YYYY-MM-DD') AS to_date`));
  }

  private async rowOf(id: string): Promise<ReconciliationRow> {
    const row = await this.rows().where('id', id).first();
    if (!row) throw new DomainError('reconciliation_not_found', `no reconciliation ${id}`, 'id');
    return row as ReconciliationRow;
  }

  /** Every item of a stored report as CSV, header first, read in bounded chunks. */
  async *itemsCsv(id: string, chunk = 5000): AsyncGenerator<string> {
    await this.rowOf(id);
    yield `${ITEM_COLUMNS.join(',')}\n`;
    for (let after = -1; ;) {
      const rows: Array<ReportItem & { seq: number }> = await this.runtime.db('reconciliation_items').where('reconciliation_id', id).andWhere('seq', '>', after)
        .orderBy('seq').limit(chunk).select('seq', ...ITEM_COLUMNS);
      if (rows.length === 0) return;
      yield rows.map((row) => csvRow(ITEM_COLUMNS, row)).join('');
      after = rows[rows.length - 1].seq;
    }
  }
}
