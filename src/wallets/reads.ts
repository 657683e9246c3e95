// The wallets' read model (DESIGN.md section 5g): wallets of an account, a wallet's balances per
// currency from its ledger accounts, and the postings on them, paged. The main balance is read
// here too under the wallet id "main": its available, held and pending ledger accounts.
import { MAIN_WALLET } from '../../ledger/chart';
import type { Metadata } from '../../ledger/metadata';
import { CURRENCIES, formatAmount, type Currency } from '../../ledger/money';
import { balancesAt } from '../balances/at';
import type { Db } from '../db';
import { keysetPage, type Page, type PageRequest } from '../db/keyset-pages';

export interface WalletRow {
  id: string; account_id: string; name: string; metadata: Metadata;
  created_at: Date; updated_at: Date; closed_at: Date | null;
}

export interface WalletBalance { currency: Currency; available: string; held: string; pending: string }

export interface LedgerEntryRow {
  id: string; seq: string; entry_id: string; kind: string; ledger_kind: string; currency: Currency;
  amount: string; balance_after: string; transfer_id: string | null; created_at: Date;
}

/** Which figure of a balance a ledger account's kind is. */
const FIGURE: Record<string, 'available' | 'held' | 'pending'> = {
  available: 'available', wallet_available: 'available', held: 'held', wallet_held: 'held', pending: 'pending',
};

export const walletView = (row: WalletRow) => ({
  id: row.id, name: row.name, metadata: row.metadata, status: row.closed_at ? 'closed' : 'open',
  created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(), closed_at: row.closed_at ? row.closed_at.toISOString() : null,
});

export class WalletReads {
  constructor(private readonly db: Db) {}

  async byId(id: string): Promise<WalletRow | undefined> {
    return this.db('wallets').where('id', id).first();
  }

  page<Item>(accountId: string, page: PageRequest, view: (row: WalletRow) => Item): Promise<Page<Item>> {
    return keysetPage(this.db('wallets').where('account_id', accountId).select('*'), 'wallets', page, view);
  }

  /** The ledger accounts of the main balance (`accountId`, "main") or of a wallet. */
  private ledgerAccounts(accountId: string, walletId: string) {
    const query = this.db('ledger_accounts as la');
    return walletId === MAIN_WALLET
      ? query.where('la.account_id', accountId).whereNull('la.wallet_id').whereIn('la.kind', ['available', 'held', 'pending'])
      : query.where('la.wallet_id', walletId);
  }

  /** Every currency the wallet ever held, in the order of CURRENCIES, each figure at the currency's scale; at `at` if given. */
  async balances(accountId: string, walletId: string, at: Date | null = null): Promise<WalletBalance[]> {
    const now: Array<{ id: string; kind: string; currency: Currency; balance: string }> = await this.ledgerAccounts(accountId, walletId).select('la.id', 'la.kind', 'la.currency', 'la.balance');
    // At an instant: each ledger account's balance then (src/balances/at.ts).
    const then = at ? await balancesAt(this.db, now.map((r) => r.id), at) : null;
    const rows = then ? now.map((r) => ({ ...r, balance: then.get(r.id) ?? '0' })) : now;
    return CURRENCIES.filter((c) => rows.some((r) => r.currency === c)).map((currency) => {
      const figure = (name: 'available' | 'held' | 'pending') => formatAmount(rows.find((r) => r.currency === currency && FIGURE[r.kind] === name)?.balance ?? '0', currency);
      return { currency, available: figure('available'), held: figure('held'), pending: figure('pending') };
    });
  }

  /** The postings on the wallet's ledger accounts, in posting order (newest first unless `order` is asc). */
  entryPage<Item>(accountId: string, walletId: string, page: PageRequest, order: 'asc' | 'desc', view: (row: LedgerEntryRow) => Item): Promise<Page<Item>> {
    const query = this.db('postings as p')
      .whereIn('p.ledger_account_id', this.ledgerAccounts(accountId, walletId).select('la.id'))
      .join('ledger_accounts as a', 'a.id', 'p.ledger_account_id')
      .join('journal_entries as je', 'je.id', 'p.entry_id')
      .select('p.id', 'p.seq', 'p.entry_id', 'je.kind', 'a.kind as ledger_kind', 'p.currency', 'p.amount', 'p.balance_after', 'p.transfer_id', 'p.created_at');
    return keysetPage(query, 'p', page, view, { orderColumns: ['seq'], order });
  }
}

export const ledgerEntryView = (row: LedgerEntryRow) => ({
  id: row.id, entry_id: row.entry_id, kind: row.kind, balance: FIGURE[row.ledger_kind], currency: row.currency,
  amount: formatAmount(row.amount, row.currency), balance_after: formatAmount(row.balance_after, row.currency),
  transfer_id: row.transfer_id, created_at: row.created_at.toISOString(),
});
