// Every quote rule the API applies. A public price (GET /v1/fx/quote) holds for the quote lifetime
// from the moment it was priced, and is kept nowhere. A persisted quote (POST /v1/fx/quotes) is a
// Postgres record alone: its expires_at and consumed_at decide, and the ledger reads it under a row
// lock when it executes one.
import type { FxQuoteRecord } from '../../ledger/fx-quotes';
import type { PricedConversion } from '../../ledger/fx-rates';
import type { Db } from '../db';
import { insertOnce } from '../db/insert-once';

export class FxQuotes {
  /** `lifetimeMs`: how long a price holds, for a persisted quote and a public one alike. */
  constructor(private readonly db: Db, private readonly lifetimeMs: number) {}

  /** Until when a price given at `pricedAt` holds. */
  expiresAt(pricedAt: Date): Date {
    return new Date(pricedAt.getTime() + this.lifetimeMs);
  }

  /**
   * Locks a price for the quote's lifetime, from the moment it was priced, under `id` (derived
   * from its Idempotency-Key's execution): the quote made, or the one found made (at its price).
   */
  async create(id: string, accountId: string, { from, to, fromAmount, price, at }: PricedConversion): Promise<{ row: FxQuoteRecord; created: boolean }> {
    return insertOnce<FxQuoteRecord>(this.db, 'fx_quotes', {
      id, account_id: accountId, from_currency: from, to_currency: to, from_amount: fromAmount.toFixed(),
      rate: price.rate, mid_rate: price.midRate, spread: price.spread, to_amount: price.toAmount,
      created_at: at, expires_at: this.expiresAt(at),
    });
  }

  async byId(id: string): Promise<FxQuoteRecord | undefined> {
    return this.db('fx_quotes').where('id', id).first();
  }

  /** Sandbox time: the quote expires at `now` (its account's), unless consumed. */
  async expireNow(id: string, now: Date): Promise<FxQuoteRecord | undefined> {
    const [row] = await this.db('fx_quotes').where('id', id).whereNull('consumed_at')
      .update({ expires_at: this.db.raw('least(expires_at, ?::timestamptz)', [now]) }).returning('*');
    return row ?? this.byId(id);
  }
}
