// Executing transfers the executing deadline could not resolve because their partner could not be
// asked (consumers/partners/deadline.ts marks them in partner_instructions): their funds stay held
// until the partner answers. Listed for an operator, longest unreachable first, with how many
// checks found the partner away; a transfer leaves the list once its partner answers or it ends.
import type { Currency } from '../../ledger/money';
import type { Db } from '../db';
import { keysetPage, type Page, type PageRequest } from '../db/keyset-pages';

export interface UnreachableTransferRow {
  id: string; account_id: string; partner: string; amount: string; currency: Currency; payout_amount: string; payout_currency: Currency; executing_since: Date;
  unreachable_since: Date; unreachable_reason: string | null; unreachable_checks: number; instruction_attempt: number;
}

export class UnreachableTransfers {
  constructor(private readonly db: Db) {}

  /** The marked transfers still executing: a derived table, so the page's cursor keys (unreachable_since, id) are its own columns. */
  private marked() {
    const { db } = this;
    return db('transfers as t').join('partner_instructions as c', 'c.transfer_id', db.raw('t.id::text'))
      .where('t.status', 'executing').whereNotNull('c.unreachable_since')
      .select('t.id', 't.account_id', 't.partner', db.raw('t.amount::text AS amount'), 't.currency', db.raw('t.payout_amount::text AS payout_amount'), 't.payout_currency',
        db.raw('t.updated_at AS executing_since'), 'c.unreachable_since', 'c.unreachable_reason', 'c.unreachable_checks',
        db.raw('c.attempt AS instruction_attempt'));
  }

  page<Item>(filter: { partner?: string }, page: PageRequest, view: (row: UnreachableTransferRow) => Item): Promise<Page<Item>> {
    const query = this.db.queryBuilder().from(this.marked().as('u')).select('u.*');
    if (filter.partner !== undefined) query.where('u.partner', filter.partner);
    return keysetPage(query, 'u', page, view, { orderColumns: ['unreachable_since', 'id'], order: 'asc' });
  }

  /** How many transfers wait on an unreachable partner, by partner. */
  async waiting(): Promise<Record<string, number>> {
    const rows: Array<{ partner: string; count: string }> = await this.db.queryBuilder().from(this.marked().as('u'))
      .groupBy('u.partner').select('u.partner', this.db.raw('count(*) AS count'));
    return Object.fromEntries(rows.map((r) => [r.partner, Number(r.count)]));
  }
}
