// A reconciliation run over days of any size (DESIGN.md section 5e): both sides are staged in
// temporary tables of the run's transaction (the ledger's movements copied by Postgres itself,
// the statement's lines a chunk at a time), the two certain passes of match.ts run there as SQL
// (one to one by reference; batch lines by their settlement detail), and the items go straight
// into reconciliation_items. Only what those passes leave (movements and lines without a
// counterpart: the exceptions, and batch lines without detail) comes back to this process, for
// the passes that search (match.ts). The process holds a chunk of lines and the leftovers, never
// the day.
import type { Knex } from 'knex';
import { performance } from 'node:perf_hooks';
import { CURRENCIES } from '../../ledger/money';
import { bulkRaw } from '../db';
import { copyInto } from '../../ledger/pg/copy';
import { log } from '../log';
import { ITEM_CATEGORIES, type CurrencyTotals, type ItemCategory, type MatchRules, type StatementEntry } from './match';
import { searchLeftovers, type RunBudget } from './run-leftovers';
import { byBatchDetail, byReference } from './run-passes';
import { analyzed, named, setAsideMatched, itemCount, totalsOf } from './run-sql';

export { ITEM_COLUMNS } from './run-sql';

/**
 * A statement line as it is staged: its amounts exact decimal text at the currency's scale, which
 * Postgres parses (a busy day's lines never become Money objects in this process).
 */
export type StagedLine = Omit<StatementEntry, 'amount' | 'fee' | 'net'> & { amount: string; fee: string; net: string };

/** The statement's lines, a chunk at a time. */
export type LineChunks = AsyncIterable<StagedLine[]>;

export interface StagedRun {
  reconciliationId: string;
  partner: string;
  /** The days read in full on both sides: the range and twice the date tolerance around it (reports.ts says why). */
  nearFrom: string;
  nearTo: string;
  /** How far around the range the ledger is searched for the movement of a line's reference. */
  wideFrom: string;
  wideTo: string;
  rules: MatchRules;
  /** The search's budget; SEARCH_BUDGET unless a caller bounds it otherwise. */
  budget?: RunBudget;
  /** An uploaded statement: its lines are named by their content, numbered here (statement-csv.ts). */
  uploaded?: boolean;
}

export interface StagedReport {
  summary: Record<ItemCategory, number>;
  totals: CurrencyTotals[];
  /** Lines the search budget did not reach (reported `not_examined`). */
  notExamined: number;
  /** The first items, by seq, report matches earlier runs made (already in the table of matches). */
  priorItems: number;
}


/**
 * The lines, a chunk at a time from `next` (the first, already asked for) on; each next chunk is
 * fetched while Postgres copies the last.
 */
async function stageLines(trx: Knex.Transaction, pages: AsyncIterator<StagedLine[]>, first: Promise<IteratorResult<StagedLine[]>>, uploaded: boolean): Promise<void> {
  await bulkRaw(trx, `CREATE TEMP TABLE recon_lines (seq bigserial, line_id text, reference text, currency text, amount numeric, fee numeric, net numeric, value_date date, settles jsonb) ON COMMIT DROP`);
  let next = first;
  try {
    for (let page = await next; !page.done; page = await next) {
      next = pages.next();
      await copyInto(trx, 'recon_lines', ['line_id', 'reference', 'currency', 'amount', 'fee', 'net', 'value_date', 'settles'], page.value.map((line) => ({
        line_id: line.lineId, reference: line.reference, currency: line.currency, amount: line.amount, fee: line.fee, net: line.net,
        value_date: line.valueDate, settles: line.settles,
      })));
    }
  } catch (error) {
    abandon(pages, next);
    throw error;
  }
  if (uploaded) await numberUploadedLines(trx);
  await analyzed(trx, 'recon_lines', ['reference', 'seq']);
}

/**
 * An uploaded line's name is its content (statement-csv.ts) and its place among the lines of that
 * content in the file: `<content>:1`, `<content>:2`, ... Counted here, by Postgres, so the process
 * never holds the file's contents at once.
 */
async function numberUploadedLines(trx: Knex.Transaction): Promise<void> {
  await bulkRaw(trx, `UPDATE recon_lines l SET line_id = l.line_id || ':' || n.k
    FROM (SELECT seq, row_number() OVER (PARTITION BY line_id ORDER BY seq) AS k FROM recon_lines) n WHERE n.seq = l.seq`);
}

/** Stops reading a statement: the fetch already under way settles on its own, and its failure is not the one reported. */
function abandon(pages: AsyncIterator<StagedLine[]>, pending: Promise<IteratorResult<StagedLine[]>>): void {
  pending.then(() => pages.return?.(), () => undefined);
}

const MOVEMENT = `SELECT p.entry_id, p.currency, -p.amount AS amount, (p.created_at AT TIME ZONE 'UTC')::date AS day, pay.external_id AS reference`;
const ON_SETTLEMENT_ACCOUNT = `p.ledger_account_id IN (SELECT id FROM ledger_accounts WHERE code LIKE :accounts AND kind = 'system')
          AND p.account_id IS NULL -- a system account's posting: postings_system_account_created
          AND e.kind <> 'reconciliation_adjustment' AND p.currency = ANY(:currencies::text[])`;
const settlementParams = (run: StagedRun) => ({ accounts: `sys:partner:${run.partner}:%`, currencies: [...CURRENCIES] });

/**
 * The movements on the partner's settlement accounts on the days read in full, signed as the
 * partner sees them (partner-statements.ts).
 */
async function stageNearMovements(trx: Knex.Transaction, run: StagedRun): Promise<void> {
  await bulkRaw(trx, ...named(
    `CREATE TEMP TABLE recon_moves ON COMMIT DROP AS
     SELECT row_number() OVER (ORDER BY day, entry_id) AS seq, * FROM ( -- a uuid sorts as its text does, cheaper
       ${MOVEMENT}
         FROM postings p
         -- An entry and its postings are written in one round at one instant (ledger/store/round-write.ts):
         -- the days' entries are read by that index, not every entry looked up (or scanned) for them.
         JOIN journal_entries e ON e.id = p.entry_id AND e.created_at >= :nearFrom::date AND e.created_at < :nearTo::date + 1
         LEFT JOIN payments pay ON pay.id = e.payment_id
        WHERE ${ON_SETTLEMENT_ACCOUNT}
          AND p.created_at >= :nearFrom::date AND p.created_at < :nearTo::date + 1
       UNION ALL
       -- The transfers sent through the partner: the partner debits them from our account with it
       -- (its statement lists them), and the ledger's side is the settlement's credit to the payee.
       SELECT p.entry_id, p.currency, -p.amount AS amount, (p.created_at AT TIME ZONE 'UTC')::date AS day, t.partner_payment_id AS reference
         FROM journal_entries e
         JOIN transfers t ON t.id = e.transfer_id AND t.partner = :partner
         JOIN postings p ON p.entry_id = e.id AND p.account_id = t.recipient_account_id AND p.currency = t.payout_currency AND p.amount > 0
        WHERE e.kind = 'transfer_settle' AND e.created_at >= :nearFrom::date AND e.created_at < :nearTo::date + 1
       UNION ALL
       -- Their returns: the partner credits them back to our account (a return line, its reference
       -- the return's), and the ledger's side is the return's debit of the payee's held part, in the
       -- entry named after its reversal (ledger/returns.ts).
       SELECT p.entry_id, p.currency, -p.amount AS amount, (p.created_at AT TIME ZONE 'UTC')::date AS day, r.value->>'partner_return_id' AS reference
         FROM journal_entries e
         JOIN transfers t ON t.id = e.transfer_id AND t.partner = :partner
         JOIN postings p ON p.entry_id = e.id AND p.account_id = t.recipient_account_id AND p.currency = t.payout_currency AND p.amount < 0
         JOIN LATERAL jsonb_array_elements(t.reversals) r ON r.value->>'id' = e.id::text
        WHERE e.kind = 'return_settle' AND e.created_at >= :nearFrom::date AND e.created_at < :nearTo::date + 1) AS m`,
    { ...settlementParams(run), partner: run.partner, nearFrom: run.nearFrom, nearTo: run.nearTo },
  ));
  await analyzed(trx, 'recon_moves', []);
}

/** Numbers the movements from beyond the days read in full below (days before) or above (days after) theirs. */
const BEYOND_SEQ = 1_000_000_000_000;

/**
 * Every movement of the run, ordered as match.ts orders them: those of the days read in full,
 * and from the days around them those of a payment a staged line names (its reference, or one its
 * batch settles) that the days read in full lack, found through the payment, so a line days early
 * or late still meets its movement without the ledger reading those days whole.
 */
async function stageMovements(trx: Knex.Transaction, run: StagedRun): Promise<void> {
  // Usually a handful, and the planner must know it to look them up one by one rather than hash every payment.
  await bulkRaw(trx,
    `CREATE TEMP TABLE recon_missing ON COMMIT DROP AS
     SELECT reference FROM (
       SELECT reference FROM recon_lines WHERE reference IS NOT NULL
       UNION SELECT jsonb_array_elements_text(settles) FROM recon_lines WHERE jsonb_typeof(settles) = 'array') AS named
      WHERE NOT EXISTS (SELECT 1 FROM recon_moves m WHERE m.reference = named.reference)`,
  );
  await bulkRaw(trx, 'ANALYZE recon_missing');
  await bulkRaw(trx, ...named(
    `INSERT INTO recon_moves
     SELECT CASE WHEN day < :nearFrom::date THEN -:beyond::bigint ELSE :beyond::bigint END + row_number() OVER (ORDER BY day, entry_id), * FROM (
       ${MOVEMENT}
         FROM recon_missing w
         JOIN payments pay ON pay.partner = :partner AND pay.external_id = w.reference -- payments_partner_reference
         JOIN journal_entries e ON e.payment_id = pay.id -- journal_entries_payment
         JOIN postings p ON p.entry_id = e.id
        WHERE ${ON_SETTLEMENT_ACCOUNT}
          AND p.created_at >= :wideFrom::date AND p.created_at < :wideTo::date + 1) AS m`,
    { ...settlementParams(run), partner: run.partner, wideFrom: run.wideFrom, wideTo: run.wideTo, nearFrom: run.nearFrom, beyond: BEYOND_SEQ },
  ));
  await analyzed(trx, 'recon_moves', ['reference', 'seq']);
}

/** Matches the staged sides into reconciliation_items of `run.reconciliationId`, in the caller's transaction. */
export async function reconcileStaged(trx: Knex.Transaction, run: StagedRun, lines: LineChunks): Promise<StagedReport> {
  const clock = phaseClock();
  // The passes sort and hash a day's rows at once (about 30 MB for 100,000 of each side): in
  // memory, for this transaction only, rather than in files.
  await bulkRaw(trx, `SET LOCAL work_mem = '64MB'`);
  // No JIT: it compiled each of the run's big statements for 20-50 ms, more than it saved.
  await bulkRaw(trx, 'SET LOCAL jit = off');
  // The partner builds the statement's first page while Postgres reads the ledger's days.
  const pages = lines[Symbol.asyncIterator]();
  const first = pages.next();
  first.catch(() => undefined); // a partner that fails meanwhile is reported when its page is awaited, not as unhandled
  try {
    await stageNearMovements(trx, run);
  } catch (error) {
    abandon(pages, first);
    throw error;
  }
  clock.lap('ledger');
  await stageLines(trx, pages, first, run.uploaded ?? false);
  clock.lap('statement');
  await stageMovements(trx, run);
  clock.lap('ledger_beyond');
  const priorItems = await setAsideMatched(trx, run);
  clock.lap('matched_before');
  await byReference(trx, run, priorItems);
  clock.lap('by_reference');
  await byBatchDetail(trx, run, await itemCount(trx, run.reconciliationId));
  clock.lap('by_batch_detail');
  const { left, notExamined } = await searchLeftovers(trx, run, await itemCount(trx, run.reconciliationId));
  clock.lap('searched');
  const { rows } = await bulkRaw(trx, 'SELECT category, count(*)::int AS n FROM reconciliation_items WHERE reconciliation_id = ? GROUP BY category', [run.reconciliationId]);
  const summary = Object.fromEntries(ITEM_CATEGORIES.map((c) => [c, 0])) as Record<ItemCategory, number>;
  for (const row of rows as Array<{ category: ItemCategory; n: number }>) summary[row.category] = row.n;
  const totals = await totalsOf(trx, run);
  clock.lap('totals');
  log.info({ reconciliation: run.reconciliationId, partner: run.partner, leftovers: left, not_examined: notExamined, ms: clock.laps }, 'reconciliation matched');
  return { summary, totals, notExamined, priorItems };
}

/** Milliseconds spent in each phase of a run, for the log: where a slow day spends its time. */
function phaseClock() {
  const laps: Record<string, number> = {};
  let last = performance.now();
  return {
    laps,
    lap(phase: string) {
      const now = performance.now();
      laps[phase] = Math.round(now - last);
      last = now;
    },
  };
}

