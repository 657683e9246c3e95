// wallet.transfer: money between an account's main balance and its wallets, or to another account's wallet.
import { decideWalletTransfer, walletTransferAccounts } from '../decide-wallets';
import type { WalletTransfer } from '../messages';
import { asScreened, type LedgerCommand } from './command';

export const walletTransfer: LedgerCommand<WalletTransfer> = {
  parse: asScreened,
  needs: (payload) => ({ sender: true, wallets: [payload.from_wallet_id, payload.to_wallet_id] }),
  accounts: (payload, accountId, facts) => (facts.accountsById.has(accountId) ? walletTransferAccounts(accountId, payload, facts.wallets) : []),
  decide: ({ accountId, payload, facts, locked, book, now }) => decideWalletTransfer(accountId, payload, { account: facts.accountsById.get(accountId) ?? null, wallets: locked.wallets }, book, now),
};
