// What a partner dispatcher does next with an instruction (a transfer.execute, or a
// transfer.return: returns.ts), given what the partner answered (DESIGN.md section 3: partner results go back to the ledger as commands).
// Pure: no HTTP, no Kafka, no clock. The dispatcher (dispatcher.ts) does the I/O around it.
//
// The partner's truth decides: a transfer fails only when the partner confirms it holds no
// payment under our reference (a `confirm` decision: the dispatcher asks, and fails the transfer
// only on a confirmed "none"). While the partner may hold the payment, nothing fails.
//
// | partner answer                                    | decision                                   |
// |---------------------------------------------------|--------------------------------------------|
// | payment completed                                 | result completed                           |
// | payment reversed                                  | result rolled_back, partner_reversed       |
// | payment pending or authorized                     | poll the payment                           |
// | PartnerError declined                             | result failed, partner_declined            |
// | PartnerError rejected                             | result failed, partner_rejected            |
// | PartnerError unexpected, payment not known yet,   | requeue (attempt + 1): the next attempt    |
// |   attempt < UNEXPECTED_CHECKS_MAX - 1             |   asks the partner for the reference first |
// | PartnerError unexpected, payment not known yet,   | confirm: failed partner_error if the       |
// |   attempt >= UNEXPECTED_CHECKS_MAX - 1            |   partner holds no payment                 |
// | PartnerError unavailable, payment not known,      | requeue (attempt + 1)                      |
// |   attempt < ATTEMPTS_MAX                          |                                            |
// | PartnerError unavailable, payment not known,      | confirm: failed partner_unavailable if the |
// |   attempt >= ATTEMPTS_MAX                         |   partner holds no payment                 |
// | any PartnerError but declined/rejected while the  | requeue (attempt + 1): the partner holds   |
// |   payment is known (a poll)                       |   it, we follow it; never failed by us     |
// | poll ran out of time (payment known)              | requeue (attempt + 1), whatever the count  |
// | no client for the partner slug of the command     | result failed, invalid_partner             |
// | any other error (a bug)                           | thrown again: the consumer dead-letters it |
// A result carries the partner payment id when the payment is known (also after a poll). A
// declined or rejected result gives the partner's reason after ours; the client screened it
// (src/partners/screen.ts), as it did the payment id: no partner text enters a result as sent.
import type { TransferExecute } from '../../ledger/messages';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import type { PartnerPayment } from '../../src/partners/client';
import { isPartnerError, type PartnerError, type PartnerErrorKind } from '../../src/partners/errors';

/**
 * How many times one instruction is re-queued while the partner is unavailable before the
 * dispatcher asks it whether it holds the payment, and fails the transfer if it confirms it does
 * not. A partner that cannot be asked is asked again on the next attempt: nothing fails then.
 */
export const ATTEMPTS_MAX = 20;

/**
 * An unexpected answer (a 5xx other than 503, a body we cannot read) leaves open whether the
 * partner created the payment. Failing at once would release the hold while the money may be on
 * its way, so the instruction is submitted again under the same reference, which returns the
 * payment if it exists. The transfer fails only when this many submissions found no payment.
 */
export const UNEXPECTED_CHECKS_MAX = 3;

/**
 * An instruction as the partner is followed on it: the reference it is submitted under (a
 * transfer's id; a return's reversal id, returns.ts) and its attempt. A result names it by that
 * reference.
 */
export type Followed = Pick<TransferExecute, 'transfer_id' | 'attempt'>;

export type PartnerDecision =
  | { kind: 'result'; result: TransferPartnerResult }
  | { kind: 'poll'; paymentId: string }
  | { kind: 'requeue' }
  /** Fail with `result` only if the partner confirms it holds no payment under our reference. */
  | { kind: 'confirm'; result: TransferPartnerResult };

/** What the dispatcher learnt from the partner in one step. */
export type PartnerAnswer =
  /** submitPayment or getPayment answered with a payment. */
  | { kind: 'payment'; payment: PartnerPayment }
  /** submitPayment or getPayment threw; paymentId when the payment was already known (a poll). */
  | { kind: 'error'; error: unknown; paymentId: string | null }
  /** The payment stayed pending or authorized for the whole poll. */
  | { kind: 'poll_timeout'; paymentId: string }
  /** The command names a partner the dispatcher has no client for. */
  | { kind: 'unknown_partner'; partner: string };

const FAILURE_BY_ERROR_KIND: Readonly<Record<Exclude<PartnerErrorKind, 'unavailable'>, { code: string; message: string }>> = {
  declined: { code: 'partner_declined', message: 'the partner declined the payment' },
  rejected: { code: 'partner_rejected', message: 'the partner rejected the request' },
  unexpected: { code: 'partner_error', message: 'the partner answered with an unexpected error' },
};

function result(
  command: Followed,
  outcome: TransferPartnerResult['outcome'],
  partnerPaymentId: string | null,
  failure: { code: string; message: string } | null,
): PartnerDecision {
  return {
    kind: 'result',
    result: {
      transfer_id: command.transfer_id,
      outcome,
      partner_payment_id: partnerPaymentId,
      failure_code: failure?.code ?? null,
      failure_message: failure?.message ?? null,
    },
  };
}

/** Our failure, followed by what the partner said of it (screened by the client), when it said something. */
function withPartnerReason(failure: { code: string; message: string }, error: PartnerError): { code: string; message: string } {
  return error.partnerMessage === null ? failure : { code: failure.code, message: `${failure.message}: ${error.partnerMessage}` };
}

/** A failure to be confirmed by the partner before it is sent (the dispatcher asks by reference). */
function confirmFailure(command: Followed, failure: { code: string; message: string }): PartnerDecision {
  const decided = result(command, 'failed', null, failure) as { kind: 'result'; result: TransferPartnerResult };
  return { kind: 'confirm', result: decided.result };
}

/** Requeue while attempts remain; past ATTEMPTS_MAX the failure waits for the partner's confirmation. */
function requeueOrConfirm(command: Followed, failure: { code: string; message: string }): PartnerDecision {
  if (command.attempt < ATTEMPTS_MAX) return { kind: 'requeue' };
  return confirmFailure(command, {
    code: failure.code,
    message: `${failure.message} (${command.attempt + 1} attempts; the partner confirmed it holds no payment)`,
  });
}

function decideOnPayment(command: Followed, payment: PartnerPayment): PartnerDecision {
  switch (payment.status) {
    case 'completed':
      return result(command, 'completed', payment.id, null);
    case 'reversed':
      return result(command, 'rolled_back', payment.id, { code: 'partner_reversed', message: 'the partner reversed the payment after executing it' });
    case 'expired':
      return result(command, 'failed', payment.id, { code: 'claim_expired', message: 'the payee never claimed the payment' });
    case 'pending':
    case 'authorized':
      return { kind: 'poll', paymentId: payment.id };
  }
}

/** @throws the error itself when it is not a PartnerError: a bug, for the dead-letter topic. */
function decideOnError(command: Followed, error: unknown, paymentId: string | null): PartnerDecision {
  if (!isPartnerError(error)) throw error;
  // The partner holds the payment: we follow it until the partner says how it ended.
  if (paymentId !== null && (error.kind === 'unavailable' || error.kind === 'unexpected')) return { kind: 'requeue' };
  if (error.kind === 'unavailable') {
    return requeueOrConfirm(command, { code: 'partner_unavailable', message: 'the partner stayed unavailable' });
  }
  if (error.kind === 'unexpected') {
    if (command.attempt < UNEXPECTED_CHECKS_MAX - 1) return { kind: 'requeue' };
    const { code, message } = FAILURE_BY_ERROR_KIND.unexpected;
    return confirmFailure(command, { code, message: `${message}; after ${command.attempt + 1} submissions the partner confirmed it holds no payment under our reference` });
  }
  return result(command, 'failed', paymentId, withPartnerReason(FAILURE_BY_ERROR_KIND[error.kind], error));
}

/**
 * The next step for `command` after `answer` (table above).
 * @throws the answer's error when it is not a PartnerError.
 */
export function decidePartnerOutcome(command: Followed, answer: PartnerAnswer): PartnerDecision {
  switch (answer.kind) {
    case 'payment':
      return decideOnPayment(command, answer.payment);
    case 'error':
      return decideOnError(command, answer.error, answer.paymentId);
    case 'poll_timeout':
      // The partner holds a payment that is not final yet: followed, never failed by us.
      return { kind: 'requeue' };
    case 'unknown_partner':
      return result(command, 'failed', null, { code: 'invalid_partner', message: `no partner "${answer.partner}"` });
  }
}
