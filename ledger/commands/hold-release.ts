// hold.void and hold.expire: a hold ends, and what its captures left goes back to its side. Two
// commands of one shape: a client's void, and the ledger's own expiry when the hold is due
// (DESIGN.md section 5g; what hold commands share: ../hold-rules.ts).
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { sideEvent } from '../balance-events';
import { refusal, type Decision } from '../decision';
import { holdAccounts, holdDecision, holdEvent, refuseOnHold, release, sideOf } from '../hold-rules';
import type { HoldRecord } from '../holds';
import { formatAmount } from '../money';
import { asScreened, type LedgerCommand } from './command';

/** Releases what is left of a hold: `hold.void` from its owner, `hold.expire` from the ledger's own expiry sweep. */
export interface HoldRelease {
  hold_id: string;
}

const releaseCommand = (decide: typeof decideHoldVoid): LedgerCommand<HoldRelease> => ({
  shape: { ids: ['hold_id'], amounts: [], currencies: [], accountIsUuid: true },
  parse: asScreened,
  needs: (payload) => ({ holds: [payload.hold_id] }),
  accounts(payload, accountId, facts) {
    const hold = facts.holds.get(payload.hold_id);
    return hold && hold.account_id === accountId ? holdAccounts(hold) : [];
  },
  decide: ({ accountId, payload, locked, book, now }) => decide(accountId, locked.holds.get(payload.hold_id) ?? null, book, now),
});

export const holdVoid = releaseCommand(decideHoldVoid);
export const holdExpire = releaseCommand(decideHoldExpire);

/** A void from the hold's owner: releases all that is left; refused once the hold is no longer active. */
export function decideHoldVoid(accountId: string, current: HoldRecord | null, book: BalanceBook, now: Date): Decision {
  const refused = refuseOnHold(accountId, current, now);
  if (refused) return refused;
  return released(current!, book, now, 'voided');
}

/**
 * The ledger's own expiry of a hold (consumers/ledger/hold-expiry.ts sends it once the hold is due):
 * releases what is left. A hold no longer active is answered as it is and nothing changes, so a
 * second expiry command, or one racing a void or a final capture, moves no money twice.
 */
export function decideHoldExpire(accountId: string, current: HoldRecord | null, book: BalanceBook, now: Date): Decision {
  if (!current || current.account_id !== accountId) return refusal('hold_not_found', 'no such hold', 'hold_id');
  if (current.status !== 'active') return holdDecision(current, false);
  return released(current, book, now, 'expired');
}

function released(current: HoldRecord, book: BalanceBook, now: Date, status: 'voided' | 'expired'): Decision {
  const hold: HoldRecord = { ...current, updated_at: now };
  const decision = holdDecision(hold, false);
  const rest = release(decision, book, hold, randomUUID(), status);
  decision.events.push(holdEvent(hold, 'hold.released', { reason: status, released: formatAmount(rest, hold.currency) }), sideEvent(book, hold.account_id, sideOf(hold), hold.currency));
  return decision;
}
