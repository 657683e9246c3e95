// The holds' read model (DESIGN.md section 5g): the ledger writes the holds table in the round
// that moves their money; the API reads it here, and shows a hold as the API's view.
import { MAIN_WALLET } from '../../ledger/chart';
import type { HoldRecord } from '../../ledger/holds';
import type { HoldShown } from '../../ledger/outcome';
import { metadataOf } from '../../ledger/metadata';
import { formatAmount } from '../../ledger/money';
import type { Db } from '../db';
import { keysetPage, whereCreated, whereMetadata, type CreatedFilter, type Page, type PageRequest } from '../db/keyset-pages';

/** A hold as the API shows it: of the ledger's outcome, or of a row of this read model. */
export const holdView = (hold: HoldShown) => ({
  id: hold.id, status: hold.status, amount: formatAmount(hold.amount, hold.currency), currency: hold.currency,
  captured_amount: formatAmount(hold.captured_amount, hold.currency), released_amount: formatAmount(hold.released_amount, hold.currency),
  wallet_id: hold.wallet_id ?? MAIN_WALLET, description: hold.description, metadata: metadataOf(hold),
  captures: hold.captures.map((c) => ({ ...c, amount: formatAmount(c.amount, hold.currency) })),
  expires_at: hold.expires_at.toISOString(), created_at: hold.created_at.toISOString(), updated_at: hold.updated_at.toISOString(),
});

/** What a holds list keeps: one status, one wallet ("main": the main balance), a window on created_at, one currency, metadata. */
export interface HoldFilter extends CreatedFilter { status?: string; wallet_id?: string }

export class HoldReads {
  constructor(private readonly db: Db) {}

  async byId(id: string): Promise<HoldRecord | undefined> {
    return this.db('holds').where('id', id).first();
  }

  page<Item>(accountId: string, filter: HoldFilter, page: PageRequest, view: (row: HoldRecord) => Item): Promise<Page<Item>> {
    const scope = this.db('holds').where('account_id', accountId).select('*');
    const query = whereMetadata(whereCreated(scope.clone(), 'holds', filter), 'holds.metadata', filter.metadata);
    if (filter.status) query.where('status', filter.status);
    if (filter.wallet_id === MAIN_WALLET) query.whereNull('wallet_id');
    else if (filter.wallet_id) query.where('wallet_id', filter.wallet_id);
    return keysetPage(query, 'holds', page, view, { scope });
  }
}
