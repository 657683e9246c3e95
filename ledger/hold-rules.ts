// What every command on a hold shares (DESIGN.md section 5g), where open-source ledgers get holds
// wrong: a hold moves its amount out of `available` at once, so every later decision (transfers,
// FX, other holds, wallet transfers) counts it and none can overdraw it; a capture takes what is
// left and no more; a hold no longer active takes no capture and no void; and all of it is decided
// in the ledger's rounds, against the round's locked hold and balances, so two commands racing on
// one hold are decided one after the other and the second sees the first's outcome. The commands
// themselves are ledger/commands/hold-*.ts; the record and its one rule in time are holds.ts.
import type { BalanceBook } from './balances';
import { sideAccounts } from './balance-events';
import { heldBy, MAIN_WALLET, pending, spendable, type LedgerAccountRef } from './chart';
import { emptyDecision, post, refusal, type Decision, type EventDraft } from './decision';
import { holdStatus, type HoldRecord, type HoldStatus } from './holds';
import { formatAmount, Money, type Amount } from './money';
import { holdOutcome } from './outcome';
import { entry } from './postings';

/** The side a hold holds from: "main" or its wallet. */
export const sideOf = (hold: Pick<HoldRecord, 'wallet_id'>): string => hold.wallet_id ?? MAIN_WALLET;

/** What is left of a hold: neither captured nor released. */
export const leftOf = (hold: HoldRecord): Amount => new Money(hold.amount).minus(hold.captured_amount).minus(hold.released_amount);

/** The hold as the API shows it is built from this; its event carries the figures a reader needs. */
export function holdEvent(hold: HoldRecord, type: 'hold.created' | 'hold.captured' | 'hold.released', extra: Record<string, unknown> = {}): EventDraft {
  return {
    type, resourceType: 'hold', resourceId: hold.id, accountId: hold.account_id, status: hold.status,
    amount: formatAmount(hold.amount, hold.currency), currency: hold.currency,
    attributes: {
      wallet_id: sideOf(hold), captured_amount: formatAmount(hold.captured_amount, hold.currency),
      released_amount: formatAmount(hold.released_amount, hold.currency), expires_at: hold.expires_at.toISOString(), ...extra,
    },
    metadata: hold.metadata,
  };
}

/** A decision whose outcome is `hold`, created or changed. */
export function holdDecision(hold: HoldRecord, created: boolean): Decision {
  const decision = emptyDecision(holdOutcome(hold, created));
  decision.changes.push({ kind: 'hold', hold, isNew: created });
  return decision;
}

/** Releases what is left of `hold` back to its available balance, ending it as `status`. */
export function release(decision: Decision, book: BalanceBook, hold: HoldRecord, entryId: string, status: HoldStatus): Amount {
  const rest = leftOf(hold);
  if (!rest.isZero()) {
    post(decision, book, entry(entryId, 'hold_release', {}, [
      { account: heldBy(hold.account_id, hold.wallet_id, hold.currency), amount: rest.negated() },
      { account: spendable(hold.account_id, hold.wallet_id, hold.currency), amount: rest },
    ]));
  }
  hold.released_amount = new Money(hold.released_amount).plus(rest).toFixed();
  hold.status = status;
  return rest;
}

/** Why a hold takes no capture or void now: unknown (or another account's), or no longer active (also once past expires_at). */
export function refuseOnHold(accountId: string, current: HoldRecord | null, now: Date): Decision | null {
  if (!current || current.account_id !== accountId) return refusal('hold_not_found', 'no such hold', 'hold_id');
  if (current.status !== 'active') return refusal('hold_not_active', `the hold is ${current.status}: nothing is left to capture or release`, 'hold_id');
  if (holdStatus(current, now) === 'expired') return refusal('hold_not_active', `the hold expired at ${current.expires_at.toISOString()}`, 'hold_id');
  return null;
}

/** Every ledger account a hold command may post to or report, once its hold is known. */
export function holdAccounts(hold: Pick<HoldRecord, 'account_id' | 'wallet_id' | 'currency'>, recipientId: string | null = null): LedgerAccountRef[] {
  // A payout through a rail waits in the account's pending, whatever the hold was on.
  const refs = [...sideAccounts(hold.account_id, hold.wallet_id ?? MAIN_WALLET, hold.currency), pending(hold.account_id, hold.currency)];
  return recipientId === null ? refs : [...refs, ...sideAccounts(recipientId, MAIN_WALLET, hold.currency)];
}
