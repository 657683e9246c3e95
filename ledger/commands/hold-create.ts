// hold.create: an amount of a side (the main balance or a wallet) set aside until captured, voided or expired.
import { MAIN_WALLET } from '../chart';
import { decideHoldCreate } from '../decide-holds';
import { sideAccounts } from '../decide-wallets';
import type { HoldCreate } from '../messages';
import { invalid, isCanonicalUuid, isTextOrNull } from '../screen';
import type { LedgerCommand } from './command';

export const holdCreate: LedgerCommand<HoldCreate> = {
  shape: { ids: ['hold_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true, metadata: 'create' },
  parse(payload) {
    const fields = payload as Record<string, unknown>;
    if (fields.wallet_id !== null && !isCanonicalUuid(fields.wallet_id)) return { refusal: invalid('wallet_id', 'wallet_id must be null (the main balance) or a wallet id') };
    if (typeof fields.expires_at !== 'string' || Number.isNaN(Date.parse(fields.expires_at))) return { refusal: invalid('expires_at', 'expires_at must be an ISO 8601 instant') };
    if (!isTextOrNull(fields.description)) return { refusal: invalid('description', 'description must be text') };
    return { payload: payload as HoldCreate };
  },
  needs: (payload) => ({ sender: true, wallets: payload.wallet_id !== null ? [payload.wallet_id] : [] }),
  accounts({ wallet_id: walletId, currency }, accountId, facts) {
    if (!facts.accountsById.has(accountId)) return [];
    // Another account's wallet, or none: refused, and no ledger account is made for it.
    if (walletId !== null && facts.wallets.get(walletId)?.account_id !== accountId) return [];
    return sideAccounts(accountId, walletId ?? MAIN_WALLET, currency);
  },
  decide: ({ commandId, accountId, payload, facts, locked, book, now }) => decideHoldCreate(commandId, accountId, payload, { account: facts.accountsById.get(accountId) ?? null, wallets: locked.wallets }, book, now),
};
