// hold.capture: part or all of a hold paid to a recipient (by email, or bank details of a vIBAN).
import { decideHoldCapture, holdAccounts } from '../decide-holds';
import type { HoldCaptureCommand } from '../messages';
import { refused } from '../outcome';
import { invalid, isTextOrNull } from '../screen';
import type { LedgerCommand } from './command';
import { captureRecipientOf } from './facts';

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
