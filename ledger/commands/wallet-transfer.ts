// wallet.transfer: money between an account's main balance ("main") and its wallets, or to another
// account's wallet by id (DESIGN.md section 5g), in one balanced entry, against the balances of the
// round like every other movement of money.
import type { BalanceBook } from '../balances';
import { sideAccounts, sideEvent } from '../balance-events';
import { MAIN_WALLET, spendable, type LedgerAccountRef } from '../chart';
import { emptyDecision, post, refusal, type Decision } from '../decision';
import { formatAmount, Money, type Currency } from '../money';
import { entry } from '../postings';
import { invalid, isTextOrNull, isWalletSide } from '../screen';
import type { WalletRecord } from '../wallets';
import type { LedgerCommand } from './command';
import type { AccountFacts } from './facts';

/**
 * Moves money between the main balance ("main") and the account's wallets, or to another
 * account's wallet by id (DESIGN.md section 5g). The id is the wallet transfer's and its entry's.
 */
export interface WalletTransfer {
  wallet_transfer_id: string;
  from_wallet_id: string;
  to_wallet_id: string;
  amount: string;
  currency: Currency;
  description: string | null;
}

export const walletTransfer: LedgerCommand<WalletTransfer> = {
  shape: { ids: ['wallet_transfer_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true },
  parse(payload) {
    const fields = payload as Record<string, unknown>;
    for (const field of ['from_wallet_id', 'to_wallet_id']) if (!isWalletSide(fields[field])) return { refusal: invalid(field, `${field} must be "main" or a wallet id (a UUID in lower case)`) };
    if (!isTextOrNull(fields.description)) return { refusal: invalid('description', 'description must be text') };
    return { payload: payload as WalletTransfer };
  },
  needs: (payload) => ({ sender: true, wallets: [payload.from_wallet_id, payload.to_wallet_id] }),
  accounts: (payload, accountId, facts) => (facts.accountsById.has(accountId) ? walletTransferAccounts(accountId, payload, facts.wallets) : []),
  decide: ({ accountId, payload, facts, locked, book, now }) => decideWalletTransfer(accountId, payload, { account: facts.accountsById.get(accountId) ?? null, wallets: locked.wallets }, book, now),
};

/** The owner of a side of the transfer: the sender for "main", the wallet's account otherwise; null when it may not be used. */
function ownerOf(walletId: string, senderId: string, wallets: Map<string, WalletRecord>, mayBeForeign: boolean): string | null {
  if (walletId === MAIN_WALLET) return senderId;
  const wallet = wallets.get(walletId);
  if (!wallet || wallet.closed_at !== null) return null;
  if (wallet.account_id !== senderId && !mayBeForeign) return null;
  return wallet.account_id;
}

/** The ledger accounts a wallet transfer may post to or report, once its wallets are known. */
function walletTransferAccounts(accountId: string, command: WalletTransfer, wallets: Map<string, WalletRecord>): LedgerAccountRef[] {
  const from = ownerOf(command.from_wallet_id, accountId, wallets, false);
  const to = ownerOf(command.to_wallet_id, accountId, wallets, true);
  if (from === null || to === null) return [];
  return [...sideAccounts(from, command.from_wallet_id, command.currency), ...sideAccounts(to, command.to_wallet_id, command.currency)];
}

export interface WalletTransferFacts {
  account: AccountFacts | null;
  /** The wallets the command names, as locked for the round; absent: no such wallet. */
  wallets: Map<string, WalletRecord>;
}

/** Checks in order of precedence; another account's wallet is as unknown as a missing one, except as the destination. */
function refuseWalletTransfer(accountId: string, command: WalletTransfer, { account, wallets }: WalletTransferFacts, book: BalanceBook): Decision | null {
  if (!account) return refusal('resource_not_found', 'the sending account does not exist');
  if (account.kybStatus !== 'active') return refusal('account_not_active', `the account's KYB status is ${account.kybStatus}; it must be active to move money`);
  if (ownerOf(command.from_wallet_id, accountId, wallets, false) === null) return refusal('wallet_not_found', 'from_wallet_id names no open wallet of the account', 'from_wallet_id');
  if (ownerOf(command.to_wallet_id, accountId, wallets, true) === null) return refusal('wallet_not_found', 'to_wallet_id names no open wallet', 'to_wallet_id');
  if (command.from_wallet_id === command.to_wallet_id) return refusal('invalid_request', 'from_wallet_id and to_wallet_id are the same', 'to_wallet_id');
  if (book.balance(spendable(accountId, command.from_wallet_id, command.currency)).isLessThan(command.amount)) {
    return refusal('insufficient_funds', `the available ${command.currency} balance of ${command.from_wallet_id === MAIN_WALLET ? 'the main balance' : 'the wallet'} is below the amount`, 'amount');
  }
  return null;
}

export function decideWalletTransfer(accountId: string, command: WalletTransfer, facts: WalletTransferFacts, book: BalanceBook, now: Date): Decision {
  const refused = refuseWalletTransfer(accountId, command, facts, book);
  if (refused) return refused;
  const { currency } = command;
  const amount = new Money(command.amount);
  const recipientId = ownerOf(command.to_wallet_id, accountId, facts.wallets, true)!;
  const decision = emptyDecision({
    kind: 'wallet_transfer',
    wallet_transfer: {
      id: command.wallet_transfer_id, account_id: accountId, from_wallet_id: command.from_wallet_id, to_wallet_id: command.to_wallet_id,
      amount: formatAmount(amount, currency), currency, description: command.description, status: 'completed', created_at: now.toISOString(),
    },
  });
  post(decision, book, entry(command.wallet_transfer_id, 'wallet_transfer', {}, [
    { account: spendable(accountId, command.from_wallet_id, currency), amount: amount.negated() },
    { account: spendable(recipientId, command.to_wallet_id, currency), amount },
  ]));
  decision.events.push(sideEvent(book, accountId, command.from_wallet_id, currency), sideEvent(book, recipientId, command.to_wallet_id, currency));
  return decision;
}
