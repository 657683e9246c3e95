// The balance.updated events a movement of a customer's money announces, for the main balance and
// for a wallet (a "side"), and the ledger accounts each reads: every command that moves money
// reports the sides it moved with these, so no command builds a balance event of its own.
import type { BalanceBook } from './balances';
import { available, heldBy, MAIN_WALLET, pending, spendable, type LedgerAccountRef } from './chart';
import type { EventDraft } from './decision';
import { formatAmount, type Currency } from './money';

/**
 * The main balance's balance.updated event: `amount` is the money the account owns, available +
 * held + pending, as on a wallet and in the routes (DESIGN.md section 3). Every round loads the
 * held account beside each available one it names (round.ts heldBeside), so the figure is there
 * whichever command moved the balance.
 */
export function balanceEvent(book: BalanceBook, accountId: string, currency: Currency): EventDraft {
  const availableBalance = book.balance(available(accountId, currency));
  const pendingBalance = book.balance(pending(accountId, currency));
  const heldBalance = book.balance(heldBy(accountId, MAIN_WALLET, currency));
  return {
    type: 'balance.updated', resourceType: 'balance', resourceId: accountId, accountId, status: 'updated',
    amount: formatAmount(availableBalance.plus(heldBalance).plus(pendingBalance), currency), currency,
    attributes: { available: formatAmount(availableBalance, currency), held: formatAmount(heldBalance, currency), pending: formatAmount(pendingBalance, currency) },
  };
}

/**
 * A wallet's balance.updated event: the account's event, naming the wallet, with its available
 * and held figures (pending is the main balance's alone: a rail's payout waits there).
 */
export function walletBalanceEvent(book: BalanceBook, accountId: string, walletId: string, currency: Currency): EventDraft {
  const availableBalance = book.balance(spendable(accountId, walletId, currency));
  const heldBalance = book.balance(heldBy(accountId, walletId, currency));
  return {
    type: 'balance.updated', resourceType: 'balance', resourceId: accountId, accountId, status: 'updated',
    amount: formatAmount(availableBalance.plus(heldBalance), currency), currency,
    attributes: { wallet_id: walletId, available: formatAmount(availableBalance, currency), held: formatAmount(heldBalance, currency), pending: formatAmount('0', currency) },
  };
}

/** The balance event of the main balance or a wallet after a movement. */
export function sideEvent(book: BalanceBook, accountId: string, walletId: string, currency: Currency): EventDraft {
  return walletId === MAIN_WALLET ? balanceEvent(book, accountId, currency) : walletBalanceEvent(book, accountId, walletId, currency);
}

/**
 * The sender's balance events after a transfer's money left `walletId` (or came back to it): the
 * wallet's, and the main balance's whenever its pending moved (`pendingMoved`) or it is the wallet.
 */
export function senderBalanceEvents(book: BalanceBook, accountId: string, walletId: string, currency: Currency, pendingMoved: boolean): EventDraft[] {
  if (walletId === MAIN_WALLET) return [balanceEvent(book, accountId, currency)];
  const wallet = walletBalanceEvent(book, accountId, walletId, currency);
  return pendingMoved ? [balanceEvent(book, accountId, currency), wallet] : [wallet];
}

/** What a side's balance event reads: its spendable and held accounts, and the main balance's pending. */
export function sideAccounts(accountId: string, walletId: string, currency: Currency): LedgerAccountRef[] {
  const refs = [spendable(accountId, walletId, currency), heldBy(accountId, walletId, currency)];
  return walletId === MAIN_WALLET ? [...refs, pending(accountId, currency)] : refs;
}
