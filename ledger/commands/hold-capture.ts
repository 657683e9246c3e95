// hold.capture: part or all of a hold paid to a recipient (by email, or bank details of a vIBAN),
// as POST /v1/transfers would pay them (DESIGN.md section 5g; what hold commands share: ../hold-rules.ts).
import { randomUUID } from 'node:crypto';
import type { BalanceBook } from '../balances';
import { sideEvent } from '../balance-events';
import { available, heldBy, MAIN_WALLET, pending } from '../chart';
import { post, refusal, type Decision } from '../decision';
import { canonicalEmail } from '../emails';
import { holdAccounts, holdDecision, holdEvent, leftOf, refuseOnHold, release, sideOf } from '../hold-rules';
import type { HoldRecord } from '../holds';
import { formatAmount, Money, STABLECOINS } from '../money';
import { refused } from '../outcome';
import { entry } from '../postings';
import { invalid, isTextOrNull } from '../screen';
import { walk } from '../transfer-lifecycle';
import { ESTIMATED_ARRIVAL, railFor, type TransferRecord } from '../transfers';
import type { LedgerCommand } from './command';
import { bankKey, type AccountFacts, type BatchFacts } from './facts';
import type { BankRecipient } from './transfer-create';

/**
 * Pays `amount` of a hold to a recipient as POST /v1/transfers would: `recipient_email` (internal)
 * or `recipient` with bank details (external, paid in the hold's currency); `final` releases the rest.
 */
export interface HoldCaptureCommand {
  hold_id: string;
  capture_id: string;
  transfer_id: string;
  amount: string;
  final: boolean;
  recipient_email?: string;
  recipient?: BankRecipient;
  note: string | null;
}

export const holdCapture: LedgerCommand<HoldCaptureCommand> = {
  shape: { ids: ['hold_id', 'capture_id', 'transfer_id'], amounts: ['amount'], currencies: [], accountIsUuid: true },
  parse(payload) {
    const fields = payload as Record<string, unknown>;
    if (typeof fields.final !== 'boolean') return { refusal: invalid('final', 'final must be true or false') };
    if (!isTextOrNull(fields.note)) return { refusal: invalid('note', 'note must be text') };
    // One recipient, of either form (the API checks the same): anything else names nobody to pay.
    const { recipient_email: email, recipient } = payload as HoldCaptureCommand;
    const internal = typeof email === 'string' && recipient === undefined;
    const external = email === undefined && typeof recipient?.bank?.account_number === 'string' && typeof recipient.bank.currency === 'string' && typeof recipient.email === 'string';
    if (!internal && !external) return { refusal: refused('invalid_request', 'a capture names recipient_email or recipient with bank details, not both', 'recipient_email') };
    return { payload: payload as HoldCaptureCommand };
  },
  needs: (payload) => ({
    holds: [payload.hold_id],
    emails: payload.recipient_email !== undefined ? [payload.recipient_email] : [],
    banks: payload.recipient ? [{ accountNumber: payload.recipient.bank.account_number, currency: payload.recipient.bank.currency }] : [],
  }),
  accounts(payload, accountId, facts) {
    const hold = facts.holds.get(payload.hold_id);
    return hold && hold.account_id === accountId ? holdAccounts(hold, captureRecipientOf(payload, facts)?.id ?? null) : [];
  },
  decide: ({ commandId, accountId, payload, facts, locked, book, now }) => decideHoldCapture(commandId, accountId, payload, locked.holds.get(payload.hold_id) ?? null, {
    recipient: captureRecipientOf(payload, facts),
  }, book, now),
};

/** The recipient a capture names, if the ledger knows the account: by email, or by the vIBAN of its bank details. */
function captureRecipientOf(command: HoldCaptureCommand, facts: BatchFacts): AccountFacts | null {
  if (command.recipient_email !== undefined) return facts.accountsByEmail.get(canonicalEmail(command.recipient_email)) ?? null;
  const bank = command.recipient!.bank;
  return facts.accountsByBank.get(bankKey(bank.account_number, bank.currency)) ?? null;
}

export interface HoldCaptureFacts {
  /** Internal: the account registered under recipient_email. External: the account whose vIBAN matches the bank details. */
  recipient: AccountFacts | null;
}

/** The email a capture's recipient is known by. */
const recipientEmailOf = (command: HoldCaptureCommand): string => command.recipient_email ?? command.recipient!.email;

/** Checks in order of precedence: the hold, what is left of it, then the recipient as a transfer's. */
function refuseCapture(accountId: string, command: HoldCaptureCommand, current: HoldRecord | null, { recipient }: HoldCaptureFacts, now: Date): Decision | null {
  const onHold = refuseOnHold(accountId, current, now);
  if (onHold) return onHold;
  const hold = current!;
  if (leftOf(hold).isLessThan(command.amount)) {
    return refusal('hold_exceeded', `only ${formatAmount(leftOf(hold), hold.currency)} ${hold.currency} of the hold is left to capture`, 'amount');
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
 * transfer-partner-result.ts). `final`, or nothing left, ends the hold `captured`, the rest released.
 */
export function decideHoldCapture(commandId: string, accountId: string, command: HoldCaptureCommand, current: HoldRecord | null, facts: HoldCaptureFacts, book: BalanceBook, now: Date): Decision {
  const refusedNow = refuseCapture(accountId, command, current, facts, now);
  if (refusedNow) return refusedNow;
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
  if (command.final || leftOf(hold).isZero()) released = release(decision, book, hold, randomUUID(), 'captured');
  decision.events.push(
    holdEvent(hold, 'hold.captured', { capture_id: command.capture_id, capture_amount: formatAmount(amount, hold.currency), transfer_id: transfer.id, released: formatAmount(released, hold.currency) }),
    sideEvent(book, accountId, sideOf(hold), hold.currency),
  );
  if (rail === 'book') decision.events.push(sideEvent(book, recipient.id, MAIN_WALLET, hold.currency));
  return decision;
}
