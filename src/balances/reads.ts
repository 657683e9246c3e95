// The ledger read back for its account holders: transactions (the postings on an account's
// `available` ledger accounts, with the state of their transfer or payment) and balances.
import type { Currency } from '../../ledger/money';
import { balancesAt } from './at';
import type { Db } from '../db';
import { keysetPage, whereCreated, whereMetadata, type CreatedFilter, type Page, type PageRequest } from '../db/keyset-pages';

export interface TransactionRow {
  id: string; seq: string; entry_id: string; kind: string; transfer_id: string | null; account_id: string; currency: Currency;
  amount: string; balance_after: string; created_at: Date; transfer_status: string | null;
  /** The state of the payment the entry belongs to (a payment's hold, payout, release or pay-in). */
  payment_status: string | null;
}

/** A ledger account of the account: its main balance's (available, pending, held) or a wallet's (counted by the wallet's own reads). */
export interface BalanceRow { kind: 'available' | 'pending' | 'held' | 'wallet_available' | 'wallet_held'; currency: Currency; balance: string }

export class LedgerReads {
  constructor(private readonly db: Db) {}

  private transactions() {
    return this.db('postings as p')
      .join('ledger_accounts as la', (on) => on.on('la.id', 'p.ledger_account_id').andOnVal('la.kind', 'available'))
      .join('journal_entries as je', 'je.id', 'p.entry_id')
      .leftJoin('transfers as t', 't.id', 'p.transfer_id')
      .leftJoin('payments as pay', 'pay.id', 'je.payment_id')
      .select('p.id', 'p.seq', 'p.entry_id', 'je.kind', 'p.transfer_id', 'p.account_id', 'p.currency', 'p.amount', 'p.balance_after', 'p.created_at',
        't.status as transfer_status', 'pay.status as payment_status');
  }

  async transaction(id: string): Promise<TransactionRow | undefined> {
    return this.transactions().where('p.id', id).first();
  }

  /**
   * Newest first, in posting order, those of `filter` alone; the cursor is a place in the account's
   * whole list. Filtered, the list is read through the account's available ledger accounts (one
   * per currency, named here so the planner may start from them): a window is then a range of
   * postings_account_time (ledger_account_id, created_at, seq) on each, not a scan of the
   * account's history by postings_account_available (account_id, seq), which reads the
   * unfiltered list in its order.
   */
  transactionPage<Item>(accountId: string, filter: CreatedFilter, page: PageRequest, view: (row: TransactionRow) => Item): Promise<Page<Item>> {
    const scope = this.transactions().where('p.account_id', accountId);
    const query = whereCreated(scope.clone(), 'p', filter);
    if (filter.from || filter.to || filter.currency) query.where('la.account_id', accountId);
    if (filter.currency) query.where('la.currency', filter.currency);
    if (filter.metadata) query.whereRaw('p.entry_id = ANY(ARRAY(?))', [this.entriesWithMetadata(accountId, filter.metadata)]);
    return keysetPage(query, 'p', page, view, { orderColumns: ['seq'], scope });
  }

  /**
   * The journal entries of the account's own transfers and payments whose metadata holds
   * `metadata` (a transaction is a transfer's or a payment's movement; another account's transfer
   * to this one is that account's, and so is its metadata): found on their GIN indexes
   * (whereMetadata), then by journal_entries' transfer_id and payment_id indexes. As an array
   * (= ANY(ARRAY(...))), so the postings are read by entry_id from these few entries, never by
   * walking the account's history for them.
   */
  private entriesWithMetadata(accountId: string, metadata: Record<string, string>) {
    const own = (table: 'transfers' | 'payments') => whereMetadata(this.db(table).where(`${table}.account_id`, accountId).select(`${table}.id`), `${table}.metadata`, metadata);
    return this.db('journal_entries').whereIn('transfer_id', own('transfers')).select('id')
      .unionAll((union) => union.from('journal_entries').whereIn('payment_id', own('payments')).select('id'));
  }

  /** The account's ledger accounts with their balances now, or at the instant `at` (src/balances/at.ts). */
  async balances(accountId: string, at: Date | null = null): Promise<BalanceRow[]> {
    const rows: Array<BalanceRow & { id: string }> = await this.db('ledger_accounts').where('account_id', accountId).select('id', 'kind', 'currency', 'balance');
    if (!at) return rows;
    const then = await balancesAt(this.db, rows.map((r) => r.id), at);
    return rows.map((r) => ({ ...r, balance: then.get(r.id) ?? '0' }));
  }
}
