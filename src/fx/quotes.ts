// Every quote rule the API applies. A public price (GET /v1/fx/quote) holds for the quote lifetime
// from the moment it was priced, and is kept nowhere. A persisted quote (POST /v1/fx/quotes) is a
// Postgres record and a Redis key that lives as long as the quote holds.
// The record decides (its expires_at and consumed_at); the key lets a reader see a live lock
// without Postgres, and vanishes by itself. Redis being away does not stop a quote: the record
// is written first, and the key is best effort.
import { randomUUID } from 'node:crypto';
import type { FxQuoteRecord } from '../../ledger/fx-quotes';
import type { PricedConversion } from '../../ledger/fx-rates';
import type { Db } from '../db';
import { log } from '../log';
import type { RedisClient } from '../redis';

export const lockKey = (quoteId: string): string => `fxq:${quoteId}`;

export class FxQuotes {
  /** `lifetimeMs`: how long a price holds, for a persisted quote and a public one alike. */
  constructor(private readonly db: Db, private readonly redis: RedisClient, private readonly lifetimeMs: number) {}

  /** Until when a price given at `pricedAt` holds. */
  expiresAt(pricedAt: Date): Date {
    return new Date(pricedAt.getTime() + this.lifetimeMs);
  }

  /** Locks a price for the quote's lifetime, from the moment it was priced. */
  async create(accountId: string, { from, to, fromAmount, price, at }: PricedConversion): Promise<FxQuoteRecord> {
    const [row] = await this.db('fx_quotes').insert({
      id: randomUUID(), account_id: accountId, from_currency: from, to_currency: to, from_amount: fromAmount.toFixed(),
      rate: price.rate, mid_rate: price.midRate, spread: price.spread, to_amount: price.toAmount,
      created_at: at, expires_at: this.expiresAt(at),
    }).returning('*');
    await this.redis.set(lockKey(row.id), accountId, 'PX', this.lifetimeMs).catch((error) => {
      log.warn({ err: error, quoteId: row.id }, 'the quote lock could not be set in Redis; the record holds the quote');
    });
    return row;
  }

  async byId(id: string): Promise<FxQuoteRecord | undefined> {
    return this.db('fx_quotes').where('id', id).first();
  }

  /** Sandbox time: the quote expires now, unless consumed (by this service's clock, as it was created). */
  async expireNow(id: string): Promise<FxQuoteRecord | undefined> {
    const [row] = await this.db('fx_quotes').where('id', id).whereNull('consumed_at')
      .update({ expires_at: this.db.raw('least(expires_at, ?::timestamptz)', [new Date()]) }).returning('*');
    await this.releaseLock(id);
    return row ?? this.byId(id);
  }

  /** The lock has no more to say once the quote is consumed or expired (best effort: it lapses anyway). */
  async releaseLock(id: string): Promise<void> {
    await this.redis.del(lockKey(id)).catch(() => undefined);
  }
}
