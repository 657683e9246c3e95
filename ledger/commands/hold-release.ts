// hold.void and hold.expire: a hold ends, and what its captures left goes back to its side. Two
// commands of one shape: a client's void, and the ledger's own expiry when the hold is due.
import { decideHoldExpire, decideHoldVoid, holdAccounts } from '../decide-holds';
import type { HoldRelease } from '../messages';
import { asScreened, type LedgerCommand } from './command';

const release = (decide: typeof decideHoldVoid): LedgerCommand<HoldRelease> => ({
  shape: { ids: ['hold_id'], amounts: [], currencies: [], accountIsUuid: true },
  parse: asScreened,
  needs: (payload) => ({ holds: [payload.hold_id] }),
  accounts(payload, accountId, facts) {
    const hold = facts.holds.get(payload.hold_id);
    return hold && hold.account_id === accountId ? holdAccounts(hold) : [];
  },
  decide: ({ accountId, payload, locked, book, now }) => decide(accountId, locked.holds.get(payload.hold_id) ?? null, book, now),
});

export const holdVoid = release(decideHoldVoid);
export const holdExpire = release(decideHoldExpire);
