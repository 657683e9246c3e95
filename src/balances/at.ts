// Balances at an instant (DESIGN.md section 5g, `?at=`). Each posting carries its ledger
// account's balance after it, written by the ledger in the round's transaction; the ledger takes
// a round's time after locking its ledger accounts, so on one ledger account posting times follow
// posting order. The balance at an instant is then the balance_after of the account's last posting
// at or before it (0 without one): one index probe per ledger account (postings_account_time),
// whatever the length of the history.
import { DomainError } from '../domain-error';
import type { Db } from '../db';
import { wallNow } from '../clock';

/** The `at` query parameter as the routes declare it. */
export const atQuerySchema = { type: 'string', format: 'date-time', examples: ['2026-01-15T12:00:00Z'], description: 'an ISO 8601 instant, not in the future: the balances as they were then' };

/** The instant of `?at=`, or null without one; an instant in the future is refused naming `at`. */
export function instantOf(at: string | undefined, now = wallNow()): Date | null {
  if (at === undefined) return null;
  const instant = new Date(at);
  if (Number.isNaN(instant.getTime())) throw new DomainError('invalid_request', 'at must be an ISO 8601 instant', 'at');
  if (instant.getTime() > now.getTime()) throw new DomainError('invalid_request', 'at must not lie in the future', 'at');
  return instant;
}

/**
 * Each ledger account of `ledgerAccounts` (a query selecting `la.id`, `la.kind`, `la.currency`
 * from `ledger_accounts as la`) with its balance at `at`.
 */
export async function balancesAt(db: Db, ledgerAccountIds: string[], at: Date): Promise<Map<string, string>> {
  if (ledgerAccountIds.length === 0) return new Map();
  const { rows }: { rows: Array<{ id: string; balance: string }> } = await db.raw(
    `SELECT la.id, coalesce(last.balance_after, 0)::text AS balance
       FROM unnest(?::uuid[]) AS la(id)
       LEFT JOIN LATERAL (SELECT p.balance_after FROM postings p WHERE p.ledger_account_id = la.id AND p.created_at <= ?
                           ORDER BY p.created_at DESC, p.seq DESC LIMIT 1) last ON true`,
    [ledgerAccountIds, at.toISOString()],
  );
  return new Map(rows.map((r) => [r.id, r.balance]));
}
