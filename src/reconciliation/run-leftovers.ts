// The leftovers of a run's two passes in Postgres (run.ts): the lines and movements left without a
// counterpart, searched in a worker thread (search-thread.ts) for sets that explain a line, or each
// reported alone. A busy day's leftovers never become objects on the API's thread: Postgres writes
// them as JSON text for the worker, and the worker answers the items as COPY text.
import type { Knex } from 'knex';
import { bulkRaw } from '../db';
import { copyTextInto } from '../../ledger/pg/copy';
import { NOT_EXAMINED, REASONS, type MatchRules } from './match';
import { fmt, ITEM_COLUMNS, MOVEMENT_JSON, named } from './run-sql';
import { searchInWorker } from './search-thread';
import { wallNowMs } from '../clock';

/**
 * What a run may spend searching (search.ts), in a worker thread: the API never waits on it
 * unbounded. A worker still at work `graceMs` past the budget's time is stopped, and every leftover
 * is reported alone (leftoversAlone).
 */
export interface RunBudget { steps: number; ms: number; graceMs: number }
export const SEARCH_BUDGET: RunBudget = { steps: 5_000_000, ms: 10_000, graceMs: 5_000 };

/** What the leftovers' pass needs of a run. */
export interface LeftoverRun { reconciliationId: string; rules: MatchRules; budget?: RunBudget }

const UNPAIRED_MOVES = `FROM recon_moves m
      WHERE NOT EXISTS (SELECT 1 FROM recon_ref r WHERE r.move_seq = m.seq AND r.rank = 1)
        AND NOT EXISTS (SELECT 1 FROM recon_batch b WHERE b.move_seq = m.seq)`;
const UNPAIRED_LINES = `FROM recon_lines l
      WHERE NOT EXISTS (SELECT 1 FROM recon_ref r WHERE r.line_seq = l.seq)
        AND NOT EXISTS (SELECT 1 FROM recon_batch b WHERE b.line_seq = l.seq)`;

/**
 * The lines the two passes left without a counterpart, for the searching pass: usually few, and
 * tens of thousands on a day of lines without reference. As JSON text of SearchJob's shape, made by
 * Postgres, so that this thread does nothing per line (the worker parses it), with their count.
 */
async function leftoverLines(trx: Knex.Transaction): Promise<{ json: string; count: number }> {
  const { rows: [row] } = await bulkRaw(trx,
    `SELECT count(*)::int AS count, coalesce(json_agg(json_build_object(
              'lineId', line_id, 'reference', reference, 'currency', currency, 'amount', amount::text, 'fee', fee::text, 'net', net::text,
              'valueDate', value_date::text, 'settles', settles) ORDER BY l.seq), '[]')::text AS json
       ${UNPAIRED_LINES}`,
  );
  return row as { json: string; count: number };
}

/** The movements the two passes left without a counterpart, for the searching pass: JSON text as leftoverLines's. */
async function leftoverMovements(trx: Knex.Transaction): Promise<{ json: string; count: number }> {
  const { rows: [row] } = await bulkRaw(trx,
    `SELECT count(*)::int AS count, coalesce(json_agg(json_build_object(
              'entryId', entry_id, 'reference', reference, 'currency', currency, 'amount', amount::text, 'date', day::text) ORDER BY m.seq), '[]')::text AS json
       ${UNPAIRED_MOVES}`);
  return row as { json: string; count: number };
}

/**
 * With no line left to search for, every movement left is ledger_only: written as match.ts's
 * last pass writes them, in its order, by Postgres (a month's exceptions never come to this process).
 */
async function unpairedMovementsLedgerOnly(trx: Knex.Transaction, run: LeftoverRun, seqFrom: number): Promise<number> {
  const { rowCount } = await bulkRaw(trx, ...named(
    `INSERT INTO reconciliation_items (reconciliation_id, seq, ${ITEM_COLUMNS.join(', ')}, movements)
     SELECT :id, :seqFrom::int + row_number() OVER (ORDER BY m.day, m.entry_id) - 1, 'ledger_only', m.entry_id, NULL, m.reference, m.currency,
            ${fmt('m.amount', 'm.currency')}, NULL, NULL, NULL, NULL,
            :reason::text || CASE WHEN m.reference IS NULL THEN '' ELSE format(' (partner reference %s)', m.reference) END, ${MOVEMENT_JSON('m')}
       ${UNPAIRED_MOVES} AND m.day BETWEEN :from::date AND :to::date`,
    { id: run.reconciliationId, seqFrom, from: run.rules.from, to: run.rules.to, reason: REASONS.noLine },
  ));
  return rowCount ?? 0;
}

/** Lines × movements beyond which the fallback does not weigh each pair (search.ts: its "wholesale" bound). */
const PAIRS_WEIGHED_MAX = 5_000_000;

/** An unpaired line that may settle movement `m` (as search.ts claims one for a line it did not examine). */
const MAY_SETTLE = `l.currency = m.currency AND (m.reference IS NULL OR l.reference IS NULL) AND abs(l.value_date - m.day) <= :days::int
          AND (l.net < 0) = (m.amount < 0) AND abs(m.amount) <= greatest(abs(l.net), abs(l.amount)) + :tol::numeric`;

/**
 * With the search not finished, each movement left: `ambiguous` when a line not examined may settle
 * it (naming the first 64 of them), never a sure-looking ledger_only; `ledger_only` otherwise.
 */
async function unpairedMovementsUnsure(trx: Knex.Transaction, run: LeftoverRun, seqFrom: number): Promise<number> {
  const { rowCount } = await bulkRaw(trx, ...named(
    `INSERT INTO reconciliation_items (reconciliation_id, seq, ${ITEM_COLUMNS.join(', ')}, movements, candidates)
     SELECT :id, :seqFrom::int + row_number() OVER (ORDER BY m.day, m.entry_id) - 1, CASE WHEN c.n > 0 THEN 'ambiguous' ELSE 'ledger_only' END, m.entry_id, NULL, m.reference, m.currency,
            ${fmt('m.amount', 'm.currency')}, NULL, NULL, NULL, NULL,
            CASE WHEN c.n = 1 THEN :one::text WHEN c.n > 1 THEN format(:many::text, c.n)
                 ELSE :reason::text || CASE WHEN m.reference IS NULL THEN '' ELSE format(' (partner reference %s)', m.reference) END END,
            ${MOVEMENT_JSON('m')}, CASE WHEN c.n > 0 THEN k.list END
       FROM recon_moves m
       CROSS JOIN LATERAL (SELECT count(*)::int AS n ${UNPAIRED_LINES} AND ${MAY_SETTLE}) c
       CROSS JOIN LATERAL (SELECT jsonb_agg(x.candidate ORDER BY x.seq) AS list FROM (
         SELECT l.seq, jsonb_build_object('ledger_entry_id', NULL, 'statement_line_id', l.line_id, 'reference', l.reference, 'amount', ${fmt('l.net', 'l.currency')}, 'value_date', l.value_date::text) AS candidate
           ${UNPAIRED_LINES} AND ${MAY_SETTLE} ORDER BY l.seq LIMIT 64) x) k
      WHERE NOT EXISTS (SELECT 1 FROM recon_ref r WHERE r.move_seq = m.seq AND r.rank = 1)
        AND NOT EXISTS (SELECT 1 FROM recon_batch b WHERE b.move_seq = m.seq) AND m.day BETWEEN :from::date AND :to::date`,
    {
      id: run.reconciliationId, seqFrom, from: run.rules.from, to: run.rules.to, reason: REASONS.noLine, days: run.rules.dateToleranceDays, tol: run.rules.amountTolerance.toFixed(),
      one: REASONS.unexaminedMayExplain(1), many: REASONS.unexaminedMayExplain(2).replace(/^2/, '%s'),
    },
  ));
  return rowCount ?? 0;
}

/**
 * Every leftover reported without the search, the lines not_examined, by Postgres: the items when
 * the searching worker did not finish in time (a loaded machine), in the order match.ts's last
 * pass writes them; a movement a line may settle is not reported as sure.
 */
async function leftoversAlone(trx: Knex.Transaction, run: LeftoverRun, seqFrom: number, pairsToWeigh: number): Promise<void> {
  // Each movement weighed against each line as the search weighs them, when that is a bounded
  // amount of work (search.ts takes the same bound for its "wholesale" case).
  const movements = pairsToWeigh <= PAIRS_WEIGHED_MAX ? await unpairedMovementsUnsure(trx, run, seqFrom) : await unpairedMovementsLedgerOnly(trx, run, seqFrom);
  await bulkRaw(trx, ...named(
    `INSERT INTO reconciliation_items (reconciliation_id, seq, ${ITEM_COLUMNS.join(', ')}, movements)
     SELECT :id, :seqFrom::int + row_number() OVER (ORDER BY l.seq) - 1, 'statement_only', NULL, l.line_id, l.reference, l.currency,
            NULL, ${fmt('l.net', 'l.currency')}, NULL, NULL, NULL, :reason, '[]'::jsonb
       ${UNPAIRED_LINES} AND l.value_date BETWEEN :from::date AND :to::date`,
    { id: run.reconciliationId, seqFrom: seqFrom + movements, from: run.rules.from, to: run.rules.to, reason: NOT_EXAMINED },
  ));
}

/**
 * The leftovers' items, numbered from `seqFrom`: searched in the worker when lines are left, each
 * movement alone when none is. How many of each side were left, and the lines not examined.
 */
export async function searchLeftovers(trx: Knex.Transaction, run: LeftoverRun, seqFrom: number): Promise<{ left: { lines: number; movements: number }; notExamined: number }> {
  const openLines = await leftoverLines(trx);
  if (openLines.count === 0) return { left: { lines: 0, movements: await unpairedMovementsLedgerOnly(trx, run, seqFrom) }, notExamined: 0 };
  const movements = await leftoverMovements(trx);
  const left = { lines: openLines.count, movements: movements.count };
  const budget = run.budget ?? SEARCH_BUDGET;
  const columns = ['reconciliation_id', 'seq', ...ITEM_COLUMNS, 'movements', 'candidates'];
  const searched = await searchInWorker({
    movementsJson: movements.json, linesJson: openLines.json, rules: { ...run.rules, amountTolerance: run.rules.amountTolerance.toFixed() },
    budget: { steps: budget.steps, deadline: wallNowMs() + budget.ms }, graceMs: budget.graceMs, target: { reconciliationId: run.reconciliationId, seqFrom, columns },
  });
  if (!searched) {
    await leftoversAlone(trx, run, seqFrom, openLines.count * movements.count);
    return { left, notExamined: openLines.count };
  }
  await copyTextInto(trx, 'reconciliation_items', columns, searched.copy);
  return { left, notExamined: searched.notExamined };
}
