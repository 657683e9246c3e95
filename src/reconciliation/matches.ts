// The table of matches (DESIGN.md section 5e): every pair a run matched, movement ↔ line and by
// which run, one row per side (reconciliation_matched_lines, reconciliation_matches), each side
// unique. A later run leaves those sides out of its matching (run.ts), so a movement or line
// matched once is never matched again, and what contradicts an earlier match is an exception.
import type { Knex } from 'knex';
import { bulkRaw } from '../db';
import { DomainError } from '../domain-error';
import { fingerprintSql, LINE_FINGERPRINT } from './run-sql';

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

/** A pair (or a line and the set of movements it is the sum of) finance matched by hand, and the report that raised it. */
export interface HandMatch { partner: string; ledgerEntryIds: string[]; statementLineId: string; reconciliationId: string; lineNet: string; currency: string; at: Date }

/**
 * Records a pair (a line and one movement, or the set it is the sum of) matched by hand as a run's
 * matches are recorded, with reason `by_hand`, so a later run reports every side matched and never
 * pairs one with something else. The line's fingerprint is its net at its currency's scale with no
 * settlement detail (a line matched by hand names its movements); a line whose content differs
 * later is matched afresh, as a run's would be.
 * A side matched before (by a run, or by hand with another side) is refused, 409
 * `already_matched` naming it: the caller's transaction records nothing.
 * @throws DomainError already_matched
 */
export async function recordHandMatch(trx: Knex.Transaction, match: HandMatch): Promise<void> {
  const params = { partner: match.partner, statementLineId: match.statementLineId, reconciliationId: match.reconciliationId, lineNet: match.lineNet, currency: match.currency, at: match.at };
  const line = await bulkRaw(trx,
    `INSERT INTO reconciliation_matched_lines (partner, statement_line_id, reconciliation_id, reason, fingerprint, created_at)
     VALUES (:partner, :statementLineId, :reconciliationId, 'by_hand', ${fingerprintSql(':lineNet::numeric', ':currency::text', 'NULL')}, :at)
     ON CONFLICT DO NOTHING RETURNING statement_line_id`, params);
  if (line.rows.length === 0) {
    const earlier = await trx('reconciliation_matched_lines').where({ partner: match.partner, statement_line_id: match.statementLineId }).first('reconciliation_id', 'reason');
    throw new DomainError('already_matched', `statement line ${match.statementLineId} is matched already (${earlier?.reason ?? 'by an earlier run'}, report ${earlier?.reconciliation_id ?? 'unknown'}): it cannot be matched again`, 'statement_line_id');
  }
  for (const ledgerEntryId of match.ledgerEntryIds) {
    const movement = await bulkRaw(trx,
      `INSERT INTO reconciliation_matches (ledger_entry_id, partner, statement_line_id, reconciliation_id, reason, created_at)
       VALUES (:ledgerEntryId, :partner, :statementLineId, :reconciliationId, 'by_hand', :at) ON CONFLICT DO NOTHING RETURNING ledger_entry_id`, { ...params, ledgerEntryId });
    if (movement.rows.length === 0) {
      const earlier = await trx('reconciliation_matches').where({ ledger_entry_id: ledgerEntryId }).first('statement_line_id', 'reason');
      const field = match.ledgerEntryIds.length > 1 ? 'ledger_entry_ids' : 'ledger_entry_id';
      throw new DomainError('already_matched', `ledger entry ${ledgerEntryId} is matched already with statement line ${earlier?.statement_line_id ?? 'unknown'} (${earlier?.reason ?? 'by an earlier run'}): choose another, or explain or adjust this exception`, field);
    }
  }
}
