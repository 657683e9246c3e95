// The ledger's decisions on holds (DESIGN.md section 5g), where open-source ledgers get them wrong:
// a hold moves its amount out of `available` at once, so every later decision (transfers, FX,
// other holds, wallet transfers) counts it and none can overdraw it; a capture takes what is left
// and no more; a hold no longer active takes no capture and no void; and all of it is decided in
// the ledger's rounds, against the round's locked hold and balances, so two commands racing on
// one hold are decided one after the other and the second sees the first's outcome.
import { holdOutcome } from './outcome';
import { randomUUID } from 'node:crypto';
import { available, heldBy, MAIN_WALLET, pending, spendable, type LedgerAccountRef } from './chart';
import type { BalanceBook } from './balances';
import { emptyDecision, post, refusal, walk, type AccountFacts, type Decision, type EventDraft } from './decide';
import { sideAccounts, sideEvent } from './decide-wallets';
import { holdStatus, type HoldRecord, type HoldStatus } from './holds';
import type { HoldCaptureCommand, HoldCreate } from './messages';
import { formatAmount, Money, STABLECOINS, type Amount } from './money';
import { entry } from './postings';
import { ESTIMATED_ARRIVAL, railFor, type TransferRecord } from './transfers';
import type { WalletRecord } from './wallets';

const sideOf = (hold: Pick<HoldRecord, 'wallet_id'>): string => hold.wallet_id ?? MAIN_WALLET;
const left = (hold: HoldRecord): Amount => new Money(hold.amount).minus(hold.captured_amount).minus(hold.released_amount);

/** The hold as the API shows it is built from this; its event carries the figures a reader needs. */
function holdEvent(hold: HoldRecord, type: 'hold.created' | 'hold.captured' | 'hold.released', extra: Record<string, unknown> = {}): EventDraft {
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

function holdDecision(hold: HoldRecord, created: boolean): Decision {
  const decision = emptyDecision(holdOutcome(hold, created));
  decision.changes.push({ kind: 'hold', hold, isNew: created });
  return decision;
}

/** Releases what is left of `hold` back to its available balance, ending it as `status`. */
function release(decision: Decision, book: BalanceBook, hold: HoldRecord, entryId: string, status: HoldStatus): Amount {
  const rest = left(hold);
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

export interface HoldCreateFacts {
  account: AccountFacts | null;
  /** The wallet the command names, as locked for the round. */
  wallets: Map<string, WalletRecord>;
}

/** Checks in order of precedence. */
function refuseHoldCreate(accountId: string, command: HoldCreate, { account, wallets }: HoldCreateFacts, book: BalanceBook, now: Date): Decision | null {
  if (!account) return refusal('resource_not_found', 'the account does not exist');
  if (account.kybStatus !== 'active') return refusal('account_not_active', `the account's KYB status is ${account.kybStatus}; it must be active to move money`);
  if (command.wallet_id !== null) {
    const wallet = wallets.get(command.wallet_id);
    if (!wallet || wallet.account_id !== accountId || wallet.closed_at !== null) return refusal('wallet_not_found', 'wallet_id names no open wallet of the account', 'wallet_id');
  }
  if (new Date(command.expires_at).getTime() <= now.getTime()) return refusal('invalid_request', 'expires_at must lie in the future', 'expires_at');
  if (book.balance(spendable(accountId, command.wallet_id, command.currency)).isLessThan(command.amount)) {
    return refusal('insufficient_funds', `the available ${command.currency} balance is below the amount`, 'amount');
  }
  return null;
}

export function decideHoldCreate(commandId: string, accountId: string, command: HoldCreate, facts: HoldCreateFacts, book: BalanceBook, now: Date): Decision {
  const refused = refuseHoldCreate(accountId, command, facts, book, now);
  if (refused) return refused;
  const amount = new Money(command.amount);
  const hold: HoldRecord = {
    id: command.hold_id, account_id: accountId, wallet_id: command.wallet_id, command_id: commandId, status: 'active', currency: command.currency,
    amount: amount.toFixed(), captured_amount: '0', released_amount: '0', description: command.description, metadata: command.metadata ?? {}, captures: [],
    expires_at: new Date(command.expires_at), created_at: now, updated_at: now,
  };
  const decision = holdDecision(hold, true);
  post(decision, book, entry(command.hold_id, 'hold_create', {}, [
    { account: spendable(accountId, command.wallet_id, command.currency), amount: amount.negated() },
    { account: heldBy(accountId, command.wallet_id, command.currency), amount },
  ]));
  decision.events.push(holdEvent(hold, 'hold.created'), sideEvent(book, accountId, sideOf(hold), command.currency));
  return decision;
}

/** Why a hold takes no capture or void now: unknown (or another account's), or no longer active (also once past expires_at). */
function refuseOnHold(accountId: string, current: HoldRecord | null, now: Date): Decision | null {
  if (!current || current.account_id !== accountId) return refusal('hold_not_found', 'no such hold', 'hold_id');
  if (current.status !== 'active') return refusal('hold_not_active', `the hold is ${current.status}: nothing is left to capture or release`, 'hold_id');
  if (holdStatus(current, now) === 'expired') return refusal('hold_not_active', `the hold expired at ${current.expires_at.toISOString()}`, 'hold_id');
  return null;
}

export interface HoldCaptureFacts {
  /** Internal: the account registered under recipient_email. External: the account whose vIBAN matches the bank details. */
  recipient: AccountFacts | null;
}

/** The email a capture's recipient is known by. */
const recipientEmailOf = (command: HoldCaptureCommand): string => command.recipient_email ?? command.recipient!.email;

function refuseCapture(accountId: string, command: HoldCaptureCommand, current: HoldRecord | null, { recipient }: HoldCaptureFacts, now: Date): Decision | null {
  const onHold = refuseOnHold(accountId, current, now);
  if (onHold) return onHold;
  const hold = current!;
  if (left(hold).isLessThan(command.amount)) {
    return refusal('hold_exceeded', `only ${formatAmount(left(hold), hold.currency)} ${hold.currency} of the hold is left to capture`, 'amount');
  }
  if (command.recipient) {
    if (command.recipient.bank.currency !== hold.currency) return refusal('invalid_request', `a capture pays out in the hold's currency, ${hold.currency}`, 'recipient.bank.currency');
    if (!recipient) return refusal('external_send_blocked', 'sandbox: the bank details match no registered sandbox account', 'recipient.bank.account_number');
    if (recipient.id === accountId) return refusal('invalid_request', 'the bank details are the holding account\'s own', 'recipient.bank.account_number');
    return null;
  }
  if (!recipient) return refusal('recipient_not_found', 'no account is registered under recipient_email', 'recipient_email');
  if (recipient.id === accountId) return refusal('invalid_request', 'the recipient is the holding account itself', 'recipient_email');
  if (!recipient.hasVibans && !recipient.hasChainWallet) return refusal('phantom_recipient', 'the recipient has no wallet or bank account to receive funds', 'recipient_email');
  if (STABLECOINS.includes(hold.currency) && !recipient.hasChainWallet) return refusal('phantom_recipient', `the recipient has no chain wallet to receive ${hold.currency}`, 'recipient_email');
  return null;
}

/**
 * A capture pays the recipient from the held funds as POST /v1/transfers would pay them: between
 * two accounts of this ledger in fiat, a book transfer completed at once; to bank details, or in a
 * stablecoin, the amount moves from held to the account's pending and the partner rail is told,
 * the transfer executing until the partner's answer settles or releases it as any transfer's
 * (a failed payout comes back to where it was held: the transfer names the hold's wallet,
 * decide-partner-results.ts). `final`, or nothing left, ends the hold `captured`, the rest released.
 */
export function decideHoldCapture(commandId: string, accountId: string, command: HoldCaptureCommand, current: HoldRecord | null, facts: HoldCaptureFacts, book: BalanceBook, now: Date): Decision {
  const refused = refuseCapture(accountId, command, current, facts, now);
  if (refused) return refused;
  const recipient = facts.recipient!;
  const amount = new Money(command.amount);
  const hold: HoldRecord = { ...current!, captures: [...current!.captures], updated_at: now };
  const decision = holdDecision(hold, false);
  const type = command.recipient ? 'external' : 'internal';
  const rail = railFor(type, hold.currency);
  const transfer: TransferRecord = {
    id: command.transfer_id, account_id: accountId, from_wallet_id: hold.wallet_id, command_id: commandId, type, status: 'pending',
    amount: amount.toFixed(), currency: hold.currency, payout_amount: amount.toFixed(), payout_currency: hold.currency, fx_rate: null, fx_mid_rate: null, fx_spread: null,
    recipient_account_id: recipient.id, recipient: command.recipient ? (command.recipient as unknown as Record<string, unknown>) : { email: command.recipient_email },
    note: command.note, metadata: {}, partner: rail, partner_payment_id: null, failure_code: null, failure_message: null,
    estimated_arrival: ESTIMATED_ARRIVAL[rail], created_at: now, updated_at: now, completed_at: null,
  };
  decision.changes.push({ kind: 'transfer', transfer, isNew: true });
  const from = heldBy(accountId, hold.wallet_id, hold.currency);
  if (rail === 'book') {
    post(decision, book, entry(command.capture_id, 'hold_capture', { transferId: transfer.id }, [{ account: from, amount: amount.negated() }, { account: available(recipient.id, hold.currency), amount }]));
    transfer.partner_payment_id = `book_${command.capture_id.replace(/-/g, '')}`;
    transfer.completed_at = now;
    walk(transfer, ['pending', 'quoting', 'executing', 'completed'], now, decision);
  } else {
    post(decision, book, entry(command.capture_id, 'hold_capture', { transferId: transfer.id }, [{ account: from, amount: amount.negated() }, { account: pending(accountId, hold.currency), amount }]));
    walk(transfer, ['pending', 'quoting', 'executing'], now, decision);
    decision.changes.push({
      kind: 'partner_instruction', partner: rail, accountId, type: 'transfer.execute',
      payload: { transfer_id: transfer.id, amount: formatAmount(amount, hold.currency), currency: hold.currency, attempt: 0, beneficiary: { ...transfer.recipient, account_id: recipient.id }, scenario: null },
    });
  }
  hold.captured_amount = new Money(hold.captured_amount).plus(amount).toFixed();
  hold.captures.push({ id: command.capture_id, amount: amount.toFixed(), transfer_id: transfer.id, recipient_email: recipientEmailOf(command), final: command.final, created_at: now.toISOString() });
  let released = new Money(0);
  if (command.final || left(hold).isZero()) released = release(decision, book, hold, randomUUID(), 'captured');
  decision.events.push(
    holdEvent(hold, 'hold.captured', { capture_id: command.capture_id, capture_amount: formatAmount(amount, hold.currency), transfer_id: transfer.id, released: formatAmount(released, hold.currency) }),
    sideEvent(book, accountId, sideOf(hold), hold.currency),
  );
  if (rail === 'book') decision.events.push(sideEvent(book, recipient.id, MAIN_WALLET, hold.currency));
  return decision;
}

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

/** Every ledger account a hold command may post to or report, once its hold is known. */
export function holdAccounts(hold: Pick<HoldRecord, 'account_id' | 'wallet_id' | 'currency'>, recipientId: string | null = null): LedgerAccountRef[] {
  // A payout through a rail waits in the account's pending, whatever the hold was on.
  const refs = [...sideAccounts(hold.account_id, hold.wallet_id ?? MAIN_WALLET, hold.currency), pending(hold.account_id, hold.currency)];
  return recipientId === null ? refs : [...refs, ...sideAccounts(recipientId, MAIN_WALLET, hold.currency)];
}
