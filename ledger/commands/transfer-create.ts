// transfer.create: one transfer, internal (settled in its entry) or to bank details (held, then
// paid by a partner: transfer.partner_result); from the main balance or a wallet.
import { available, pending, type LedgerAccountRef } from '../chart';
import { decideTransferCreate, payoutCurrencyOf } from '../decide';
import { sideAccounts } from '../decide-wallets';
import type { TransferCreate } from '../messages';
import { isCanonicalUuid, invalid } from '../screen';
import type { LedgerCommand, Needs } from './command';
import { recipientOf, type BatchFacts } from './facts';

/** What a transfer (alone or a batch's item) names: its recipient, and the wallet it is sent from. */
export function transferNeeds(transfer: TransferCreate): Needs {
  return {
    sender: true,
    emails: transfer.type === 'internal' && transfer.recipient_email ? [transfer.recipient_email] : [],
    banks: transfer.type === 'external' && transfer.recipient ? [{ accountNumber: transfer.recipient.bank.account_number, currency: transfer.recipient.bank.currency }] : [],
    wallets: transfer.from_wallet_id ? [transfer.from_wallet_id] : [],
  };
}

/** The ledger accounts a transfer (alone or a batch's item) may post to. */
export function transferAccounts(accountId: string, transfer: TransferCreate, facts: BatchFacts): LedgerAccountRef[] {
  if (!facts.accountsById.has(accountId)) return []; // refused: no such sender
  const refs = [available(accountId, transfer.currency), pending(accountId, transfer.currency)];
  const fromWalletId = transfer.from_wallet_id ?? null;
  // Sent from a wallet of the sender: its accounts too (its balance event reads the held one).
  // Another account's wallet, or none: refused, and no ledger account is made for it.
  if (fromWalletId !== null && facts.wallets.get(fromWalletId)?.account_id === accountId) refs.push(...sideAccounts(accountId, fromWalletId, transfer.currency));
  const recipient = recipientOf(transfer, facts);
  if (recipient) refs.push(available(recipient.id, payoutCurrencyOf(transfer)));
  return refs;
}

export const transferCreate: LedgerCommand<TransferCreate> = {
  shape: { ids: ['transfer_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true, metadata: 'create' },
  parse(payload) {
    const walletId = (payload as TransferCreate).from_wallet_id;
    if (walletId !== undefined && walletId !== null && !isCanonicalUuid(walletId)) return { refusal: invalid('from_wallet_id', 'from_wallet_id must be null (the main balance) or a wallet id') };
    return { payload: payload as TransferCreate };
  },
  needs: transferNeeds,
  accounts: (payload, accountId, facts) => transferAccounts(accountId, payload, facts),
  decide: ({ commandId, accountId, payload, facts, locked, book, now }) => decideTransferCreate(commandId, payload, {
    sender: facts.accountsById.get(accountId) ?? null, recipient: recipientOf(payload, facts), wallets: locked.wallets,
  }, book, now),
};
