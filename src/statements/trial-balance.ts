// The operator's views of the whole ledger (DESIGN.md section 5e): the trial balance at an
// instant, and the journal between two instants. The journal is read in chunks inside one
// read-only REPEATABLE READ transaction, so an export of any length sees one consistent ledger
// and holds one chunk in memory at a time.
import type { Knex } from 'knex';
import type { Db } from '../db';
import { formatAmount, isCurrency, Money, type Amount } from '../../ledger/money';

const CHUNK = 1000;

export interface TrialBalanceAccount { ledger_account: string; account_id: string | null; kind: string; currency: string; debits: string; credits: string; net: string }
export interface TrialBalanceTotal { currency: string; debits: string; credits: string; net: string }
export interface TrialBalance { at: string; accounts: TrialBalanceAccount[]; totals: TrialBalanceTotal[] }

const format = (amount: string | Amount, currency: string) => (isCurrency(currency) ? formatAmount(amount, currency) : new Money(amount).toFixed());

/**
 * Every ledger account's debits (postings that lowered its balance), credits (that raised it) and
 * net (credits − debits, its balance) from all postings made up to `at`; the totals net to zero in
 * each currency, since every entry does.
 */
export async function trialBalance(db: Db, at: Date): Promise<TrialBalance> {
  const { rows }: { rows: Array<{ code: string; account_id: string | null; kind: string; currency: string; debits: string; credits: string }> } = await db.raw(
    `SELECT la.code, la.account_id, la.kind, la.currency,
            coalesce(-sum(p.amount) FILTER (WHERE p.amount < 0), 0)::text AS debits,
            coalesce(sum(p.amount) FILTER (WHERE p.amount > 0), 0)::text AS credits
       FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id
      WHERE p.created_at <= ?
      GROUP BY la.id ORDER BY la.currency, la.code`,
    [at],
  );
  const totals = new Map<string, { debits: Amount; credits: Amount }>();
  const accounts = rows.map((row) => {
    const total = totals.get(row.currency) ?? { debits: new Money(0), credits: new Money(0) };
    totals.set(row.currency, { debits: total.debits.plus(row.debits), credits: total.credits.plus(row.credits) });
    const net = new Money(row.credits).minus(row.debits);
    return { ledger_account: row.code, account_id: row.account_id, kind: row.kind, currency: row.currency, debits: format(row.debits, row.currency), credits: format(row.credits, row.currency), net: format(net, row.currency) };
  });
  return {
    at: at.toISOString(), accounts,
    totals: [...totals].map(([currency, t]) => ({ currency, debits: format(t.debits, currency), credits: format(t.credits, currency), net: format(t.credits.minus(t.debits), currency) })),
  };
}

export interface JournalPosting { posting_id: string; ledger_account: string; account_id: string | null; currency: string; amount: string; balance_after: string }
export interface JournalEntry {
  entry_id: string; kind: string; posted_at: string; command_id: string; transfer_id: string | null; payment_id: string | null; fx_quote_id: string | null;
  postings: JournalPosting[];
}

interface EntryRow { id: string; kind: string; created_at: Date; command_id: string; transfer_id: string | null; payment_id: string | null; fx_quote_id: string | null }
interface PostingRow { id: string; entry_id: string; code: string; account_id: string | null; currency: string; amount: string; balance_after: string }

async function entriesAfter(trx: Knex.Transaction, from: Date, to: Date, after: EntryRow | null): Promise<{ chunk: JournalEntry[]; last: EntryRow | null }> {
  const query = trx('journal_entries').where('created_at', '>=', from).andWhere('created_at', '<', to);
  if (after) query.andWhereRaw('(created_at, id) > (?, ?)', [after.created_at, after.id]);
  const entries: EntryRow[] = await query.orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(CHUNK)
    .select('id', 'kind', 'created_at', 'command_id', 'transfer_id', 'payment_id', 'fx_quote_id');
  if (entries.length === 0) return { chunk: [], last: null };
  const postings: PostingRow[] = await trx('postings as p').join('ledger_accounts as la', 'la.id', 'p.ledger_account_id')
    .whereIn('p.entry_id', entries.map((e) => e.id)).orderBy('p.seq')
    .select('p.id', 'p.entry_id', 'la.code', 'p.account_id', 'p.currency', trx.raw('p.amount::text AS amount'), trx.raw('p.balance_after::text AS balance_after'));
  const byEntry = new Map<string, JournalPosting[]>(entries.map((e) => [e.id, []]));
  for (const p of postings) {
    byEntry.get(p.entry_id)!.push({ posting_id: p.id, ledger_account: p.code, account_id: p.account_id, currency: p.currency, amount: format(p.amount, p.currency), balance_after: format(p.balance_after, p.currency) });
  }
  const chunk = entries.map((e) => ({
    entry_id: e.id, kind: e.kind, posted_at: e.created_at.toISOString(), command_id: e.command_id, transfer_id: e.transfer_id, payment_id: e.payment_id,
    fx_quote_id: e.fx_quote_id, postings: byEntry.get(e.id)!,
  }));
  return { chunk, last: entries[entries.length - 1] };
}

/** The journal entries posted from `from` (inclusive) to `to` (exclusive), oldest first, a chunk at a time. */
export async function* journal(db: Db, from: Date, to: Date): AsyncGenerator<JournalEntry[]> {
  const trx = await db.transaction({ isolationLevel: 'repeatable read', readOnly: true });
  try {
    for (let after: EntryRow | null = null; ;) {
      const { chunk, last } = await entriesAfter(trx, from, to, after);
      if (chunk.length === 0) return;
      after = last;
      yield chunk;
    }
  } finally {
    await trx.rollback().catch(() => undefined);
  }
}

export const JOURNAL_CSV_COLUMNS = ['entry_id', 'kind', 'posted_at', 'command_id', 'transfer_id', 'payment_id', 'fx_quote_id', 'posting_id', 'ledger_account', 'account_id', 'currency', 'amount', 'balance_after'] as const;
