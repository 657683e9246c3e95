// The chart of accounts. Each customer account holds, per currency, an `available` and a
// `pending` ledger account (pending = held for executing outbound transfers); the system side
// holds the faucet equity that sandbox test funds come from, and the FX desk that conversions
// pass through.
import type { Currency } from './money';

export type LedgerAccountKind = 'available' | 'pending' | 'system' | 'held' | 'wallet_available' | 'wallet_held';

export interface LedgerAccountRef {
  code: string;
  accountId: string | null;
  kind: LedgerAccountKind;
  currency: Currency;
  /** The wallet whose ledger account this is (DESIGN.md section 5g); absent for the main balance and system accounts. */
  walletId?: string;
}

export function available(accountId: string, currency: Currency): LedgerAccountRef {
  return { code: `acct:${accountId}:available:${currency}`, accountId, kind: 'available', currency };
}

export function pending(accountId: string, currency: Currency): LedgerAccountRef {
  return { code: `acct:${accountId}:pending:${currency}`, accountId, kind: 'pending', currency };
}

/** What holds on the account's main balance keep out of `available` until captured or released. */
export function held(accountId: string, currency: Currency): LedgerAccountRef {
  return { code: `acct:${accountId}:held:${currency}`, accountId, kind: 'held', currency };
}

/** A wallet's spendable money in one currency; its owner's account id rides along (postings carry it). */
export function walletAvailable(walletId: string, accountId: string, currency: Currency): LedgerAccountRef {
  return { code: `wallet:${walletId}:available:${currency}`, accountId, kind: 'wallet_available', currency, walletId };
}

/** What holds on a wallet keep out of its `available`. */
export function walletHeld(walletId: string, accountId: string, currency: Currency): LedgerAccountRef {
  return { code: `wallet:${walletId}:held:${currency}`, accountId, kind: 'wallet_held', currency, walletId };
}

/** The main balance is named "main" wherever a wallet id is taken. */
export const MAIN_WALLET = 'main';

/** The spendable ledger account of the main balance or of a wallet. */
export function spendable(accountId: string, walletId: string | null, currency: Currency): LedgerAccountRef {
  return walletId === null || walletId === MAIN_WALLET ? available(accountId, currency) : walletAvailable(walletId, accountId, currency);
}

/** The held ledger account of the main balance or of a wallet. */
export function heldBy(accountId: string, walletId: string | null, currency: Currency): LedgerAccountRef {
  return walletId === null || walletId === MAIN_WALLET ? held(accountId, currency) : walletHeld(walletId, accountId, currency);
}

/** Equity that funds sandbox faucet credits: its balance is minus everything ever credited. */
export function faucetEquity(currency: Currency): LedgerAccountRef {
  return { code: `sys:faucet:${currency}`, accountId: null, kind: 'system', currency };
}

/**
 * The FX desk's position in one currency: it takes in what customers convert from and pays out
 * what they convert to, both at the mid-rate. Valued at the mid-rate, the positions of one
 * conversion net to zero but for the rounding of the paid-out side to its currency's scale.
 */
export function fxPosition(currency: Currency): LedgerAccountRef {
  return { code: `sys:fx:position:${currency}`, accountId: null, kind: 'system', currency };
}

/** What conversions earned: the spread, kept in the currency the customer received. */
export function fxSpread(currency: Currency): LedgerAccountRef {
  return { code: `sys:fx:spread:${currency}`, accountId: null, kind: 'system', currency };
}

/**
 * Where finance parks a difference between the ledger and a partner's statement that it has
 * adjusted (a reconciliation exception resolved as `adjusted`) until it is cleared.
 */
export function reconciliationSuspense(currency: Currency): LedgerAccountRef {
  return { code: `sys:reconciliation:suspense:${currency}`, accountId: null, kind: 'system', currency };
}

/** What a partner owes or is owed in one currency: pay-ins are credited from it once settled. */
export function partnerSettlement(partner: string, currency: Currency): LedgerAccountRef {
  return { code: `sys:partner:${partner}:${currency}`, accountId: null, kind: 'system', currency };
}

/**
 * What customers owe for transfers a partner paid after the ledger had failed them and released
 * their hold, where the available balance no longer covered the amount: a receivable finance
 * collects (its balance is minus what is owed), so no customer balance goes below zero.
 */
export function lateCompletionReceivable(currency: Currency): LedgerAccountRef {
  return { code: `sys:receivable:late_completion:${currency}`, accountId: null, kind: 'system', currency };
}
