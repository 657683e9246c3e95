// The table of matches (DESIGN.md section 5e): every pair a run matched, movement ↔ line and by
// which run, one row per side (reconciliation_matched_lines, reconciliation_matches), each side
// unique. A later run leaves those sides out of its matching (run.ts), so a movement or line
// matched once is never matched again, and what contradicts an earlier match is an exception.
import type { Knex } from 'knex';
import { bulkRaw } from '../db';
import { LINE_FINGERPRINT } from './run-sql';

interface RunOf { id: string; partner: string; created_at: Date }

/**
 * Records the run's new matches: its matched items after the first `priorItems` (those report
 * earlier runs' matches). A side already recorded is a broken promise of matching, and the unique
 * index refuses it: the run fails whole rather than match a side twice.
 */
export async function recordMatches(trx: Knex.Transaction, run: RunOf, priorItems: number): Promise<void> {
  // The new matches staged and analyzed first: read straight from the items, the planner takes
  // them for a few rows and looks each line up in turn (30 s for a busy day instead of one join).
  await bulkRaw(trx,
    `CREATE TEMP TABLE recon_new_matches ON COMMIT DROP AS
     SELECT seq, ledger_entry_id, statement_line_id, reason FROM reconciliation_items
      WHERE reconciliation_id = :run AND seq >= :prior AND category = 'matched' AND statement_line_id IS NOT NULL`, { run: run.id, prior: priorItems });
  await bulkRaw(trx, 'ANALYZE recon_new_matches');
  const params = { run: run.id, partner: run.partner, at: run.created_at };
  // The lines' content from the run's staged statement (recon_lines, in this transaction).
  await bulkRaw(trx,
    `INSERT INTO reconciliation_matched_lines (partner, statement_line_id, reconciliation_id, reason, fingerprint, created_at)
     SELECT :partner, n.statement_line_id, :run, n.reason, ${LINE_FINGERPRINT('l')}, :at
       FROM (SELECT DISTINCT ON (statement_line_id) statement_line_id, reason FROM recon_new_matches ORDER BY statement_line_id, seq) n -- a batch's line once, not per movement
       JOIN recon_lines l ON l.line_id = n.statement_line_id`, params);
  await bulkRaw(trx,
    `INSERT INTO reconciliation_matches (ledger_entry_id, partner, statement_line_id, reconciliation_id, reason, created_at)
     SELECT ledger_entry_id, :partner, statement_line_id, :run, reason, :at FROM recon_new_matches WHERE ledger_entry_id IS NOT NULL`, params);
}

/** A pair finance matched by hand: the movement and the line, and the report that raised it. */
export interface HandMatch { partner: string; ledgerEntryId: string; statementLineId: string; reconciliationId: string; lineNet: string; at: Date }

/**
 * Records a pair matched by hand as a run's matches are recorded, with reason `by_hand`, so a later
 * run reports both sides matched and never pairs either with something else. The line's
 * fingerprint is its net with no settlement detail (a line matched by hand names one movement); a
 * line whose content differs later is matched afresh, as a run's would be. A side already recorded
 * keeps its first match.
 */
export async function recordHandMatch(trx: Knex.Transaction, match: HandMatch): Promise<void> {
  const params = { ...match };
  await bulkRaw(trx,
    `INSERT INTO reconciliation_matched_lines (partner, statement_line_id, reconciliation_id, reason, fingerprint, created_at)
     VALUES (:partner, :statementLineId, :reconciliationId, 'by_hand', :lineNet::numeric::text || '|' || md5(''), :at) ON CONFLICT DO NOTHING`, params);
  await bulkRaw(trx,
    `INSERT INTO reconciliation_matches (ledger_entry_id, partner, statement_line_id, reconciliation_id, reason, created_at)
     VALUES (:ledgerEntryId, :partner, :statementLineId, :reconciliationId, 'by_hand', :at) ON CONFLICT DO NOTHING`, params);
}
