// What a round knows of the records its commands name: as read under its locks when it began
// (BatchFacts), and as changed since by its earlier commands (Locked).
import type { FxQuoteRecord } from '../fx-quotes';
import type { HoldRecord } from '../holds';
import type { Amount } from '../money';
import type { PaymentRecord } from '../payments';
import type { TransferRecord } from '../transfers';
import type { WalletRecord } from '../wallets';

/** What the ledger knows about an account when it decides. */
export interface AccountFacts {
  id: string;
  kybStatus: string;
  hasVibans: boolean;
  hasChainWallet: boolean;
}

export interface BatchFacts {
  accountsById: Map<string, AccountFacts>;
  accountsByEmail: Map<string, AccountFacts>;
  accountsByBank: Map<string, AccountFacts>;
  transfers: Map<string, TransferRecord>;
  /** The persisted quotes that fx.execute commands name, as locked when the round began. */
  quotes: Map<string, FxQuoteRecord>;
  /** The payments that payment.update commands name, as locked when the round began. */
  payments: Map<string, PaymentRecord>;
  /** What the faucet credited today to the accounts and currencies faucet.credit commands name (faucetKey). */
  faucetToday: Map<string, Amount>;
  /** The wallets wallet commands name, as locked when the round began. */
  wallets: Map<string, WalletRecord>;
  /** The holds hold commands name, as locked when the round began. */
  holds: Map<string, HoldRecord>;
  /** The time of each command's account that lives on a test clock, by account id: its commands are decided at it. */
  clockTimes: Map<string, Date>;
}

/**
 * The records a round decides on, as locked in its transaction and changed by its earlier
 * commands; `faucetToday` counts the round's own credits too (a copy per attempt of the round).
 */
export interface Locked {
  transfers: Map<string, TransferRecord>; quotes: Map<string, FxQuoteRecord>; payments: Map<string, PaymentRecord>; faucetToday: Map<string, Amount>;
  wallets: Map<string, WalletRecord>; holds: Map<string, HoldRecord>;
}

/** Account numbers compare without spaces and case, as banks print them in groups. */
export function normaliseAccountNumber(text: string): string {
  return text.replace(/[\s-]+/g, '').toUpperCase();
}

/** The key of bank details in accountsByBank. */
export const bankKey = (accountNumber: string, currency: string): string => `${normaliseAccountNumber(accountNumber)}|${currency}`;

/** The key of an account and currency in faucetToday. */
export const faucetKey = (accountId: string, currency: string): string => `${accountId}:${currency}`;

