// Transfers as the ledger stored them (ledger/store/reads.ts), status history included.
import { canonicalEmail } from '../../ledger/emails';
import type { TransferRecord, TransferStatus } from '../../ledger/transfers';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { assertOwnResource } from '../http/acting-account';
import type { RouteRequest } from '../http/route';
import { keysetPage, whereCreated, whereMetadata, type CreatedFilter, type Page, type PageRequest } from '../db/keyset-pages';

/** What a transfers list keeps: one status, a window on created_at, one currency, metadata, one recipient's email (any case). */
export interface TransferFilter extends CreatedFilter { status?: TransferStatus; recipientEmail?: string }

export type StoredTransfer = TransferRecord & { status_history: Array<{ from: TransferStatus | null; to: TransferStatus; at: string }> };

export class TransferReads {
  constructor(private readonly db: Db) {}

  async byId(id: string): Promise<StoredTransfer | undefined> {
    return this.db('transfers').where('id', id).first();
  }

  /**
   * The account's transfers, newest first, those of `filter` alone. The recipient is the email the
   * transfer shows (recipient.email, stored as the client wrote it, ASCII): compared lower-cased
   * with the one form of an address (ledger/emails.ts), on the index transfers_account_recipient.
   * Metadata is looked up on transfers_metadata (whereMetadata).
   */
  page<Item>(accountId: string, filter: TransferFilter, page: PageRequest, view: (row: TransferRecord) => Item): Promise<Page<Item>> {
    const scope = this.db('transfers').where('account_id', accountId).select('*');
    const query = whereMetadata(whereCreated(scope.clone(), 'transfers', filter), 'transfers.metadata', filter.metadata);
    if (filter.status) query.where('status', filter.status);
    if (filter.recipientEmail !== undefined) query.whereRaw("lower(transfers.recipient->>'email') = ?", [canonicalEmail(filter.recipientEmail)]);
    return keysetPage(query, 'transfers', page, view, { scope });
  }
}

/** The transfer a route names (`:id`), the caller's own: 404 when there is none, 403 another account's. */
export async function ownTransfer(reads: TransferReads, request: RouteRequest): Promise<StoredTransfer> {
  const row = await reads.byId(request.params.id);
  if (!row) throw new DomainError('transfer_not_found', 'no such transfer', request.params.id);
  assertOwnResource(request, row.account_id, row.id);
  return row;
}
