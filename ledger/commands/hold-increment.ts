// hold.increment: the hold's owner raises an active hold's amount by `amount` (an incremental
// authorization), taken from the side the hold holds from (the main balance or its wallet) as
// hold.create took the first: available → held, in the hold's currency, at its scale. The hold
// then holds more: what is left of it grows by the amount, so a capture or a void after it works
// on the new amount. The move is announced as every move of a side's money is, by the side's
// balance.updated; a hold has no event type of its own for it. What hold commands share is
// ../hold-rules.ts.
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { sideEvent } from '../balance-events';
import { heldBy, spendable } from '../chart';
import { post, refusal, type Decision } from '../decision';
import { holdAccounts, holdDecision, sideOf } from '../hold-rules';
import { holdStatus, type HoldRecord } from '../holds';
import { CURRENCY_SCALE, Money } from '../money';
import { entry } from '../postings';
import { invalid } from '../screen';
import type { LedgerCommand } from './command';

/** Raises the hold `hold_id` of the commanding account by `amount`, in the hold's currency. */
export interface HoldIncrement {
  hold_id: string;
  amount: string;
}

export const holdIncrement: LedgerCommand<HoldIncrement> = {
  shape: { ids: ['hold_id'], amounts: ['amount'], currencies: [], accountIsUuid: true },
  parse(payload) {
    // Screened as decimal text: its sign is this command's to check; its scale is the hold's currency's, checked once the hold is read.
    if (!new Money((payload as HoldIncrement).amount).isGreaterThan(0)) return { refusal: invalid('amount', 'amount must be greater than zero') };
    return { payload: payload as HoldIncrement };
  },
  needs: (payload) => ({ holds: [payload.hold_id] }),
  accounts(payload, accountId, facts) {
    const hold = facts.holds.get(payload.hold_id);
    return hold && hold.account_id === accountId ? holdAccounts(hold) : []; // else refused: not the account's hold
  },
  decide: ({ accountId, payload, locked, book, now }) => decideHoldIncrement(accountId, payload, locked.holds.get(payload.hold_id) ?? null, book, now),
};

/**
 * Checks in order of precedence: the hold (unknown, or another account's, which is as unknown;
 * then no longer active, also once past its expires_at), the amount's scale in the hold's
 * currency, then what its side has available.
 */
function refuseIncrement(accountId: string, command: HoldIncrement, current: HoldRecord | null, book: BalanceBook, now: Date): Decision | null {
  if (!current || current.account_id !== accountId) return refusal('hold_not_found', 'no such hold', 'hold_id');
  if (current.status !== 'active') return refusal('hold_not_active', `the hold is ${current.status}: only an active hold is raised`, 'hold_id');
  if (holdStatus(current, now) === 'expired') return refusal('hold_not_active', `the hold expired at ${current.expires_at.toISOString()}`, 'hold_id');
  const scale = CURRENCY_SCALE[current.currency];
  if (new Money(command.amount).decimalPlaces()! > scale) return refusal('invalid_request', `amount has more than ${scale} decimal places for ${current.currency}`, 'amount');
  if (book.balance(spendable(accountId, current.wallet_id, current.currency)).isLessThan(command.amount)) {
    return refusal('insufficient_funds', `the available ${current.currency} balance is below the amount`, 'amount');
  }
  return null;
}

/**
 * The hold raised by the amount, and the amount moved from its side's available to its held in
 * one entry of its own kind, hold_increment (a statement tells it from the hold's first amount).
 */
export function decideHoldIncrement(accountId: string, command: HoldIncrement, current: HoldRecord | null, book: BalanceBook, now: Date): Decision {
  const refused = refuseIncrement(accountId, command, current, book, now);
  if (refused) return refused;
  const amount = new Money(command.amount);
  const hold: HoldRecord = { ...current!, amount: new Money(current!.amount).plus(amount).toFixed(), updated_at: now };
  const decision = holdDecision(hold, false);
  post(decision, book, entry(randomUUID(), 'hold_increment', {}, [
    { account: spendable(accountId, hold.wallet_id, hold.currency), amount: amount.negated() },
    { account: heldBy(accountId, hold.wallet_id, hold.currency), amount },
  ]));
  decision.events.push(sideEvent(book, accountId, sideOf(hold), hold.currency));
  return decision;
}
