// hold.create: an amount of a side (the main balance or a wallet) set aside until captured, voided or expired.
import { MAIN_WALLET } from '../chart';
import { decideHoldCreate } from '../decide-holds';
import { sideAccounts } from '../decide-wallets';
import type { HoldCreate } from '../messages';
import { asScreened, type LedgerCommand } from './command';

export const holdCreate: LedgerCommand<HoldCreate> = {
  parse: asScreened,
  needs: (payload) => ({ sender: true, wallets: payload.wallet_id !== null ? [payload.wallet_id] : [] }),
  accounts({ wallet_id: walletId, currency }, accountId, facts) {
    if (!facts.accountsById.has(accountId)) return [];
    // Another account's wallet, or none: refused, and no ledger account is made for it.
    if (walletId !== null && facts.wallets.get(walletId)?.account_id !== accountId) return [];
    return sideAccounts(accountId, walletId ?? MAIN_WALLET, currency);
  },
  decide: ({ commandId, accountId, payload, facts, locked, book, now }) => decideHoldCreate(commandId, accountId, payload, { account: facts.accountsById.get(accountId) ?? null, wallets: locked.wallets }, book, now),
};
