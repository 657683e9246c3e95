// The chart of accounts. Each customer account holds, per currency, an `available` and a
// `pending` ledger account (pending = held for executing outbound transfers); the system side
// holds the faucet equity that sandbox test funds come from.
import type { Currency } from './money';

export type LedgerAccountKind = 'available' | 'pending' | 'system';

export interface LedgerAccountRef {
  code: string;
  accountId: string | null;
  kind: LedgerAccountKind;
  currency: Currency;
}

export function available(accountId: string, currency: Currency): LedgerAccountRef {
  return { code: `acct:${accountId}:available:${currency}`, accountId, kind: 'available', currency };
}

export function pending(accountId: string, currency: Currency): LedgerAccountRef {
  return { code: `acct:${accountId}:pending:${currency}`, accountId, kind: 'pending', currency };
}

/** Equity that funds sandbox faucet credits: its balance is minus everything ever credited. */
export function faucetEquity(currency: Currency): LedgerAccountRef {
  return { code: `sys:faucet:${currency}`, accountId: null, kind: 'system', currency };
}
