// Transfers as the ledger stored them (ledger/store.ts), status history included.
import type { TransferRecord, TransferStatus } from '../../ledger/transfers';
import type { Db } from '../db';
import { keysetPage, type Page, type PageRequest } from '../db/keyset-pages';

export type StoredTransfer = TransferRecord & { status_history: Array<{ from: TransferStatus | null; to: TransferStatus; at: string }> };

export class TransferReads {
  constructor(private readonly db: Db) {}

  async byId(id: string): Promise<StoredTransfer | undefined> {
    return this.db('transfers').where('id', id).first();
  }

  /** The account's transfers, newest first, of one status when given. */
  page<Item>(accountId: string, status: TransferStatus | undefined, page: PageRequest, view: (row: TransferRecord) => Item): Promise<Page<Item>> {
    const scope = this.db('transfers').where('account_id', accountId).select('*');
    const query = status ? scope.clone().where('status', status) : scope;
    return keysetPage(query, 'transfers', page, view, { scope });
  }
}
