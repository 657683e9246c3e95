// wallet.transfer: money between an account's main balance and its wallets, or to another account's wallet.
import { decideWalletTransfer, walletTransferAccounts } from '../decide-wallets';
import type { WalletTransfer } from '../messages';
import { invalid, isTextOrNull, isWalletSide } from '../screen';
import type { LedgerCommand } from './command';

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
