// transfer.return_result: a partner's answer to a return it was asked for, completed or failed
// (ledger/decide-returns.ts).
import { decideReturnResult, returnAccounts } from '../decide-returns';
import type { TransferReturnResult } from '../messages';
import { refused } from '../outcome';
import { asScreened, type LedgerCommand } from './command';

export const transferReturnResult: LedgerCommand<TransferReturnResult> = {
  // A partner dispatcher's, as transfer.partner_result is.
  shape: { ids: ['transfer_id', 'reversal_id'], amounts: [], currencies: [], accountIsUuid: false },
  parse(payload) {
    const { outcome } = payload as TransferReturnResult;
    if (outcome !== 'completed' && outcome !== 'failed') return { refusal: refused('invalid_request', 'outcome must be completed or failed', 'outcome') };
    return asScreened(payload);
  },
  needs: (payload) => ({ transfers: [payload.transfer_id] }),
  accounts(payload, _accountId, facts) {
    const transfer = facts.transfers.get(payload.transfer_id);
    return transfer && transfer.recipient_account_id !== null ? returnAccounts(transfer) : [];
  },
  decide: ({ payload, locked, book, now }) => decideReturnResult(payload, locked.transfers.get(payload.transfer_id) ?? null, book, now),
};
