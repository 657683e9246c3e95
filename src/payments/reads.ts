// Payments as the ledger stored them (ledger/store/reads.ts), status history included.
import type { PaymentRecord, PaymentStatus } from '../../ledger/payments';
import type { Db } from '../db';
import { keysetPage, whereCreated, whereMetadata, type CreatedFilter, type Page, type PageRequest } from '../db/keyset-pages';

/** What a payments list keeps: one customer, one status, a window on created_at, one currency, metadata. */
export interface PaymentFilter extends CreatedFilter { customerId?: string; status?: PaymentStatus }

export type StoredPayment = PaymentRecord & { status_history: Array<{ from: PaymentStatus | null; to: PaymentStatus; at: string }> };

export class PaymentReads {
  constructor(private readonly db: Db) {}

  async byId(id: string): Promise<StoredPayment | undefined> {
    return this.db('payments').where('id', id).first();
  }

  /** The account's payments, newest first, those of `filter` alone. */
  page<Item>(accountId: string, filter: PaymentFilter, page: PageRequest, view: (row: PaymentRecord) => Item): Promise<Page<Item>> {
    const scope = this.db('payments').where('account_id', accountId).select('*');
    const query = whereMetadata(whereCreated(scope.clone(), 'payments', filter), 'payments.metadata', filter.metadata);
    if (filter.customerId) query.where('customer_id', filter.customerId);
    if (filter.status) query.where('status', filter.status);
    return keysetPage(query, 'payments', page, view, { scope });
  }
}
