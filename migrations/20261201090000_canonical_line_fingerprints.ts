// A matched line's fingerprint holds its net at its currency's scale ("123.40", never "123.4" or
// "123.40" depending on who wrote it): runs staged an uploaded amount in its shortest form and a
// match by hand recorded it as the report showed it, so the next run took an unchanged line for a
// changed one and undid its match. The recorded fingerprints are rewritten in the one form; the
// currency is the line's in the report that matched it.
import type { Knex } from 'knex';

/** The scales of the currencies as of this migration (ledger/money.ts: CURRENCY_SCALE). */
const SCALE = `CASE i.currency WHEN 'USD' THEN 2 WHEN 'EUR' THEN 2 WHEN 'GBP' THEN 2 WHEN 'USDC' THEN 6 WHEN 'EURC' THEN 6 END`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE reconciliation_matched_lines x
     SET fingerprint = round(split_part(x.fingerprint, '|', 1)::numeric, ${SCALE})::text || '|' || split_part(x.fingerprint, '|', 2)
    FROM (SELECT DISTINCT ON (reconciliation_id, statement_line_id) reconciliation_id, statement_line_id, currency
            FROM reconciliation_items WHERE statement_line_id IS NOT NULL ORDER BY reconciliation_id, statement_line_id) i
   WHERE i.reconciliation_id = x.reconciliation_id AND i.statement_line_id = x.statement_line_id AND ${SCALE} IS NOT NULL`);
}

export async function down(): Promise<void> {
  // The shortest form is not restored: both forms name the same amount.
}
