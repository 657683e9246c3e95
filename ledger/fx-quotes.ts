// A persisted FX quote as the ledger decides on it (DESIGN.md section 5b): a price locked for
// one account until expires_at, consumed at most once. The record in Postgres is the truth; the
// ledger reads it under a row lock, so racing executions of one quote find one winner.
import type { Currency } from './money';

export type QuoteStatus = 'created' | 'expired' | 'consumed';

export interface FxQuoteRecord {
  id: string; account_id: string; from_currency: Currency; to_currency: Currency; from_amount: string; rate: string;
  mid_rate: string; spread: string; to_amount: string; created_at: Date; expires_at: Date; consumed_at: Date | null;
}

export function quoteStatus(quote: Pick<FxQuoteRecord, 'consumed_at' | 'expires_at'>, now: Date): QuoteStatus {
  if (quote.consumed_at) return 'consumed';
  return now.getTime() >= quote.expires_at.getTime() ? 'expired' : 'created';
}
