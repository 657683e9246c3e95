// The certain passes of a run (run.ts) in SQL, over the staged sides: one to one by the partner's
// reference, then batch lines by their settlement detail. Each writes its items straight into
// reconciliation_items from `seqFrom` on.
import type { Knex } from 'knex';
import { bulkRaw } from '../db';
import { MATCHED_BY, REASONS } from './match';
import { analyzed, fmt, ITEM_COLUMNS, MOVEMENT_JSON, MOVEMENT_OBJECT, named, reported, type RunScope } from './run-sql';

/**
 * Pass 1, one to one by reference: the first movement of each reference takes its first line
 * (of its currency first); further lines of that reference are duplicates. A pair that
 * disagrees is mismatched, naming the field.
 */
export async function byReference(trx: Knex.Transaction, run: RunScope, seqFrom: number): Promise<void> {
  await bulkRaw(trx,
    `CREATE TEMP TABLE recon_ref ON COMMIT DROP AS
     WITH firsts AS (
       SELECT DISTINCT ON (m.reference) m.seq AS move_seq, m.reference, m.currency
         FROM recon_moves m WHERE m.reference IS NOT NULL AND EXISTS (SELECT 1 FROM recon_lines l WHERE l.reference = m.reference)
        ORDER BY m.reference, m.seq)
     SELECT f.move_seq, l.seq AS line_seq, row_number() OVER (PARTITION BY f.move_seq ORDER BY (l.currency = f.currency) DESC, l.seq) AS rank
       FROM firsts f JOIN recon_lines l ON l.reference = f.reference`,
  );
  await analyzed(trx, 'recon_ref', ['move_seq', 'line_seq']);
  const how = MATCHED_BY.reference;
  await bulkRaw(trx, ...named(
    `INSERT INTO reconciliation_items (reconciliation_id, seq, ${ITEM_COLUMNS.join(', ')}, movements)
     SELECT :id, :seqFrom::int + row_number() OVER (ORDER BY r.move_seq, r.rank) - 1, x.*,
            CASE WHEN x.category = 'matched' THEN NULL WHEN r.rank > 1 THEN '[]'::jsonb ELSE ${MOVEMENT_JSON('m')} END
       FROM recon_ref r
       JOIN recon_moves m ON m.seq = r.move_seq
       JOIN recon_lines l ON l.seq = r.line_seq
       LEFT JOIN recon_ref pr ON pr.move_seq = r.move_seq AND pr.rank = 1
       LEFT JOIN recon_lines pl ON pl.seq = pr.line_seq
       CROSS JOIN LATERAL (SELECT
         CASE WHEN r.rank > 1 THEN 'statement_only'
              WHEN m.currency <> l.currency OR abs(m.amount - l.net) > :tol::numeric OR abs(m.day - l.value_date) > :days::int THEN 'mismatched'
              ELSE 'matched' END AS category,
         -- A duplicate line has no ledger side: the partner's second count is all the difference.
         CASE WHEN r.rank > 1 THEN NULL ELSE m.entry_id END, l.line_id, coalesce(m.reference, l.reference), CASE WHEN r.rank > 1 THEN l.currency ELSE m.currency END,
         CASE WHEN r.rank > 1 THEN NULL ELSE ${fmt('m.amount', 'm.currency')} END, ${fmt('l.net', 'l.currency')},
         CASE WHEN r.rank > 1 THEN 'reference' WHEN m.currency <> l.currency THEN 'currency'
              WHEN abs(m.amount - l.net) > :tol::numeric THEN CASE WHEN l.fee <> 0 AND abs(m.amount - l.amount) <= :tol::numeric THEN 'fee' ELSE 'amount' END
              WHEN abs(m.day - l.value_date) > :days::int THEN 'value_date' END AS field,
         CASE WHEN r.rank > 1 THEN NULL WHEN m.currency <> l.currency THEN m.currency
              WHEN abs(m.amount - l.net) > :tol::numeric THEN CASE WHEN l.fee <> 0 AND abs(m.amount - l.amount) <= :tol::numeric THEN ${fmt('0::numeric', 'm.currency')} ELSE ${fmt('m.amount', 'm.currency')} END
              WHEN abs(m.day - l.value_date) > :days::int THEN m.day::text END,
         CASE WHEN r.rank > 1 THEN l.reference WHEN m.currency <> l.currency THEN l.currency
              WHEN abs(m.amount - l.net) > :tol::numeric THEN CASE WHEN l.fee <> 0 AND abs(m.amount - l.amount) <= :tol::numeric THEN ${fmt('l.fee', 'm.currency')} ELSE ${fmt('l.net', 'm.currency')} END
              WHEN abs(m.day - l.value_date) > :days::int THEN l.value_date::text END,
         CASE WHEN r.rank > 1 THEN format(:duplicate::text, l.reference, pl.line_id)
              WHEN m.currency <> l.currency THEN :how::text || ', but the currencies differ'
              WHEN abs(m.amount - l.net) > :tol::numeric THEN CASE WHEN l.fee <> 0 AND abs(m.amount - l.amount) <= :tol::numeric THEN :how::text || ', but the partner took a fee the ledger does not have' ELSE :how::text || ', but the amounts differ' END
              WHEN abs(m.day - l.value_date) > :days::int THEN format(:late::text, abs(m.day - l.value_date), :days::int)
              ELSE :how::text END) AS x
      WHERE ${reported('m', 'l')}`,
    {
      id: run.reconciliationId, seqFrom, tol: run.rules.amountTolerance.toFixed(), days: run.rules.dateToleranceDays, from: run.rules.from, to: run.rules.to, how,
      duplicate: REASONS.duplicate('%s', '%s'), late: `${how}, but the value date is %s days from the posting, beyond the tolerance of %s`,
    },
  ));
}

/** Pass 2, one to many by settlement detail: a batch line with the unpaired movements of the references it lists. */
export async function byBatchDetail(trx: Knex.Transaction, run: RunScope, seqFrom: number): Promise<void> {
  await bulkRaw(trx,
    `CREATE TEMP TABLE recon_batch ON COMMIT DROP AS
     -- Each batch's settlement detail is measured once: in the select list it would be read
     -- again (de-TOASTed whole) for every movement it lists.
     WITH batches AS MATERIALIZED (
       SELECT l.seq, l.settles, jsonb_array_length(l.settles) AS listed FROM recon_lines l
        WHERE jsonb_typeof(l.settles) = 'array' AND jsonb_array_length(l.settles) > 0
          AND NOT EXISTS (SELECT 1 FROM recon_ref r WHERE r.line_seq = l.seq))
     SELECT DISTINCT ON (m.seq) b.seq AS line_seq, m.seq AS move_seq, b.listed
       FROM batches b
       CROSS JOIN LATERAL jsonb_array_elements_text(b.settles) AS s(reference)
       JOIN recon_moves m ON m.reference = s.reference
      WHERE NOT EXISTS (SELECT 1 FROM recon_ref r WHERE r.move_seq = m.seq AND r.rank = 1)
      ORDER BY m.seq, b.seq`,
  );
  await analyzed(trx, 'recon_batch', ['move_seq', 'line_seq']);
  // An agreeing batch: each movement matched with the line. A disagreeing one: ONE item, the line
  // with every movement it lists in its currency, whose amounts are the line's net and those
  // movements' sum; and a listed movement in another currency is an item of its own (`mismatched`
  // on `currency`, its amount in its currency, no statement amount), never summed with the others.
  await bulkRaw(trx, ...named(
    `INSERT INTO reconciliation_items (reconciliation_id, seq, ${ITEM_COLUMNS.join(', ')}, movements)
     WITH g AS (
       SELECT b2.line_seq, count(*) AS n, coalesce(sum(m2.amount) FILTER (WHERE m2.currency = l2.currency), 0) AS total, max(b2.listed) AS listed,
              count(*) = max(b2.listed) AND bool_and(m2.currency = l2.currency) AND abs(sum(m2.amount) - max(l2.net)) <= :tol::numeric AS agrees,
              bool_or(m2.day BETWEEN :from::date AND :to::date) OR bool_or(l2.value_date BETWEEN :from::date AND :to::date) AS shown
         FROM recon_batch b2 JOIN recon_moves m2 ON m2.seq = b2.move_seq JOIN recon_lines l2 ON l2.seq = b2.line_seq
        GROUP BY b2.line_seq),
     rows AS (
       SELECT b.line_seq, 1 AS part, b.move_seq AS sub, 'matched' AS category, m.entry_id, l.line_id, coalesce(m.reference, l.reference) AS reference, m.currency,
              ${fmt('m.amount', 'm.currency')} AS ledger_amount, ${fmt('l.net', 'l.currency')} AS statement_amount, NULL AS field, NULL AS ledger_value, NULL AS statement_value,
              :how::text AS reason, NULL::jsonb AS movements
         FROM recon_batch b JOIN g ON g.line_seq = b.line_seq AND g.agrees AND g.shown
         JOIN recon_moves m ON m.seq = b.move_seq
         JOIN recon_lines l ON l.seq = b.line_seq
       UNION ALL
       SELECT g.line_seq, 0, 0, 'batch', NULL, l.line_id, l.reference, l.currency, ${fmt('g.total', 'l.currency')}, ${fmt('l.net', 'l.currency')}, 'amount',
              ${fmt('g.total', 'l.currency')}, ${fmt('l.net', 'l.currency')}, format(:disagrees::text, l.line_id, g.n, g.listed),
              coalesce((SELECT jsonb_agg(${MOVEMENT_OBJECT('m')} ORDER BY m.seq) FROM recon_batch b JOIN recon_moves m ON m.seq = b.move_seq
                         WHERE b.line_seq = g.line_seq AND m.currency = l.currency), '[]'::jsonb)
         FROM g JOIN recon_lines l ON l.seq = g.line_seq
        WHERE NOT g.agrees AND g.shown
       UNION ALL
       SELECT b.line_seq, 1, b.move_seq, 'mismatched', m.entry_id, l.line_id, coalesce(m.reference, l.reference), m.currency, ${fmt('m.amount', 'm.currency')}, NULL, 'currency',
              m.currency, l.currency, format(:otherCurrency::text, l.line_id, l.currency, m.currency), ${MOVEMENT_JSON('m')}
         FROM recon_batch b JOIN g ON g.line_seq = b.line_seq AND NOT g.agrees AND g.shown
         JOIN recon_moves m ON m.seq = b.move_seq
         JOIN recon_lines l ON l.seq = b.line_seq
        WHERE m.currency <> l.currency)
     SELECT :id, :seqFrom::int + row_number() OVER (ORDER BY line_seq, part, sub) - 1, category, entry_id, line_id, reference, currency, ledger_amount, statement_amount,
            field, ledger_value, statement_value, reason, movements
       FROM rows`,
    {
      id: run.reconciliationId, seqFrom, tol: run.rules.amountTolerance.toFixed(), from: run.rules.from, to: run.rules.to,
      how: MATCHED_BY.reference, disagrees: REASONS.batchDisagrees('%s', '%s', '%s'), otherCurrency: REASONS.batchOtherCurrency('%s', '%s', '%s'),
    },
  ));
}
