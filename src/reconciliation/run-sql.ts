// The SQL a reconciliation run shares between its passes (run.ts): amounts at their scale,
// named parameters, staged tables' statistics, the sides earlier runs matched, and the totals.
import type { Knex } from 'knex';
import { CURRENCIES, CURRENCY_SCALE, isCurrency, Money, type Amount, type Currency } from '../../ledger/money';
import { bulkRaw } from '../db';
import type { CurrencyTotals, MatchRules } from './match';

export const ITEM_COLUMNS = ['category', 'ledger_entry_id', 'statement_line_id', 'reference', 'currency', 'ledger_amount', 'statement_amount', 'field', 'ledger_value', 'statement_value', 'reason'] as const;


/** What the shared statements need of a run (run.ts: StagedRun). */
export interface RunScope { reconciliationId: string; partner: string; rules: MatchRules }

const SCALE_SQL = `CASE currency ${CURRENCIES.map((c) => `WHEN '${c}' THEN ${CURRENCY_SCALE[c]}`).join(' ')} END`;
/** An amount at its currency's scale, as match.ts formats it (the staged amounts are exact at that scale). */
export const fmt = (expression: string, currency: string) => `round(${expression}, ${SCALE_SQL.replaceAll('currency', currency)})::text`;
/**
 * A line's content as its match records it: the net at its currency's scale (however the partner
 * wrote it) and the settlement detail. A match lasts until this changes.
 */
export const fingerprintSql = (net: string, currency: string, settles: string) => `${fmt(net, currency)} || '|' || md5(coalesce(${settles}::text, ''))`;
export const LINE_FINGERPRINT = (l: string) => fingerprintSql(`${l}.net`, `${l}.currency`, `${l}.settles`);
/** A staged movement as an item's `movements` show it (match.ts: MovementSide). */
export const MOVEMENT_OBJECT = (m: string) => `jsonb_build_object('ledger_entry_id', ${m}.entry_id, 'reference', ${m}.reference, 'amount', ${fmt(`${m}.amount`, `${m}.currency`)}, 'value_date', ${m}.day::text)`;
export const MOVEMENT_JSON = (m: string) => `jsonb_build_array(${MOVEMENT_OBJECT(m)})`;

/**
 * A staged table indexed on `columns` and analyzed: autovacuum never sees a temporary table, and
 * without statistics the planner takes a table of 100,000 rows for a few and loops over it.
 */
export async function analyzed(trx: Knex.Transaction, table: string, columns: string[]): Promise<void> {
  for (const column of columns) await bulkRaw(trx, `CREATE INDEX ON ${table} (${column})`);
  await bulkRaw(trx, `ANALYZE ${table}`);
}

/**
 * `:name` placeholders (never a `::cast`) to positional bindings: the values go to Postgres as
 * parameters, never into the text.
 */
export function named(sql: string, params: Record<string, Knex.Value>): [string, Knex.Value[]] {
  const values: Knex.Value[] = [];
  const text = sql.replace(/(?<!:):([a-z]\w*)/g, (_, name: string) => {
    if (!(name in params)) throw new Error(`no value for :${name}`);
    values.push(params[name]);
    return '?';
  });
  return [text, values];
}

/** Items of this run whose movement or line falls on a reported day (match.ts: Matcher.add). */
export const reported = (move: string, line: string) => `((${move}.day BETWEEN :from::date AND :to::date) OR (${line}.value_date BETWEEN :from::date AND :to::date))`;

/**
 * Sides an earlier run matched (the table of matches) are never matched again: they leave the
 * staged tables for recon_done_moves and recon_done_lines, and are reported matched as they were
 * then (the totals still count them). A line whose movement was matched with another line is
 * left alone with no counterpart: an exception. Returns the items written.
 */
export async function setAsideMatched(trx: Knex.Transaction, run: RunScope): Promise<number> {
  // A line whose content changed since its match (a batch line of a day still going on lists more
  // payments now) is no longer the line that was matched: its match is released, to be made afresh.
  await bulkRaw(trx, `CREATE TEMP TABLE recon_changed ON COMMIT DROP AS
    SELECT x.statement_line_id FROM reconciliation_matched_lines x JOIN recon_lines l ON x.partner = ? AND x.statement_line_id = l.line_id
     WHERE x.fingerprint <> ${LINE_FINGERPRINT('l')}`, [run.partner]);
  await bulkRaw(trx, 'DELETE FROM reconciliation_matches x USING recon_changed c WHERE x.partner = ? AND x.statement_line_id = c.statement_line_id', [run.partner]);
  await bulkRaw(trx, 'DELETE FROM reconciliation_matched_lines x USING recon_changed c WHERE x.partner = ? AND x.statement_line_id = c.statement_line_id', [run.partner]);
  await bulkRaw(trx, `CREATE TEMP TABLE recon_done_moves ON COMMIT DROP AS
    SELECT m.*, x.statement_line_id AS line_id, x.reason FROM recon_moves m JOIN reconciliation_matches x ON x.ledger_entry_id = m.entry_id`);
  await bulkRaw(trx, `CREATE TEMP TABLE recon_done_lines ON COMMIT DROP AS
    SELECT l.*, x.reason FROM recon_lines l JOIN reconciliation_matched_lines x ON x.partner = ? AND x.statement_line_id = l.line_id`, [run.partner]);
  await bulkRaw(trx, 'DELETE FROM recon_moves m USING recon_done_moves d WHERE d.seq = m.seq');
  await bulkRaw(trx, 'DELETE FROM recon_lines l USING recon_done_lines d WHERE d.seq = l.seq');
  const { rowCount } = await bulkRaw(trx, ...named(
    `INSERT INTO reconciliation_items (reconciliation_id, seq, ${ITEM_COLUMNS.join(', ')})
     SELECT :id, row_number() OVER (ORDER BY day, key) - 1, 'matched', entry_id, line_id, reference, currency, ledger_amount, statement_amount, NULL, NULL, NULL, reason FROM (
       SELECT m.day, m.entry_id::text AS key, m.entry_id, m.line_id, coalesce(m.reference, l.reference) AS reference, m.currency,
              ${fmt('m.amount', 'm.currency')} AS ledger_amount, CASE WHEN l.seq IS NULL THEN NULL ELSE ${fmt('l.net', 'l.currency')} END AS statement_amount, m.reason
         FROM recon_done_moves m LEFT JOIN recon_done_lines l ON l.line_id = m.line_id
        WHERE m.day BETWEEN :from::date AND :to::date OR l.value_date BETWEEN :from::date AND :to::date
       UNION ALL
       SELECT l.value_date, l.line_id, NULL, l.line_id, l.reference, l.currency, NULL, ${fmt('l.net', 'l.currency')}, l.reason
         FROM recon_done_lines l
        WHERE l.value_date BETWEEN :from::date AND :to::date AND NOT EXISTS (SELECT 1 FROM recon_done_moves m WHERE m.line_id = l.line_id)) AS done`,
    { id: run.reconciliationId, from: run.rules.from, to: run.rules.to },
  ));
  return rowCount ?? 0;
}


export async function itemCount(trx: Knex.Transaction, id: string): Promise<number> {
  const row = await trx('reconciliation_items').where('reconciliation_id', id).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/** Per currency, over the reported days: the ledger's and the statement's sums, what matched, and the difference. */
export async function totalsOf(trx: Knex.Transaction, run: RunScope): Promise<CurrencyTotals[]> {
  const { rows } = await bulkRaw(trx, ...named(
    `SELECT currency, sum(ledger)::text AS ledger, sum(statement)::text AS statement, sum(matched)::text AS matched FROM (
       SELECT currency, amount AS ledger, 0 AS statement, 0 AS matched FROM recon_moves WHERE day BETWEEN :from::date AND :to::date
       UNION ALL SELECT currency, amount, 0, 0 FROM recon_done_moves WHERE day BETWEEN :from::date AND :to::date
       UNION ALL SELECT currency, 0, net, 0 FROM recon_lines WHERE value_date BETWEEN :from::date AND :to::date
       UNION ALL SELECT currency, 0, net, 0 FROM recon_done_lines WHERE value_date BETWEEN :from::date AND :to::date
       UNION ALL SELECT currency, 0, 0, ledger_amount::numeric FROM reconciliation_items WHERE reconciliation_id = :id AND category = 'matched' AND ledger_amount IS NOT NULL
     ) t GROUP BY currency ORDER BY currency`,
    { from: run.rules.from, to: run.rules.to, id: run.reconciliationId },
  ));
  const format = (amount: Amount, currency: Currency) => amount.toFixed(CURRENCY_SCALE[currency], Money.ROUND_HALF_EVEN);
  return rows.filter((row: { currency: string }) => isCurrency(row.currency)).map((row: { currency: Currency; ledger: string; statement: string; matched: string }) => ({
    currency: row.currency, ledger: format(new Money(row.ledger), row.currency), statement: format(new Money(row.statement), row.currency),
    matched: format(new Money(row.matched), row.currency), difference: format(new Money(row.statement).minus(row.ledger), row.currency),
  }));
}

