// transfer.partner_result: a partner's answer to a transfer to bank details: paid, failed or
// returned, perhaps late (ledger/decide-partner-results.ts).
import { available, fxPosition, fxSpread, lateCompletionReceivable, pending } from '../chart';
import { decidePartnerResult } from '../decide-partner-results';
import { sideAccounts } from '../decide-wallets';
import type { TransferPartnerResult } from '../messages';
import { asScreened, type LedgerCommand } from './command';

export const transferPartnerResult: LedgerCommand<TransferPartnerResult> = {
  shape: { ids: ['transfer_id'], amounts: [], currencies: [], accountIsUuid: false },
  parse: asScreened,
  needs: (payload) => ({ transfers: [payload.transfer_id] }),
  accounts(payload, _accountId, facts) {
    const transfer = facts.transfers.get(payload.transfer_id);
    if (!transfer) return [];
    const refs = [available(transfer.account_id, transfer.currency), pending(transfer.account_id, transfer.currency)];
    // A failed payout from a wallet goes back to it, and its balance event reads it.
    if (transfer.from_wallet_id !== null) refs.push(...sideAccounts(transfer.account_id, transfer.from_wallet_id, transfer.currency));
    if (transfer.recipient_account_id) refs.push(available(transfer.recipient_account_id, transfer.payout_currency));
    if (transfer.payout_currency !== transfer.currency) refs.push(fxPosition(transfer.currency), fxPosition(transfer.payout_currency), fxSpread(transfer.payout_currency));
    // A late completion may owe what the sender's balance no longer covers (ledger/decide.ts).
    if (transfer.status === 'failed' && payload.outcome === 'completed') refs.push(lateCompletionReceivable(transfer.currency));
    return refs;
  },
  decide: ({ payload, locked, book, now }) => decidePartnerResult(payload, locked.transfers.get(payload.transfer_id) ?? null, locked.wallets, book, now),
};
