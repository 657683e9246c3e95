// How a partner dispatcher follows what it asked a partner for, a payout (dispatcher.ts) or a
// return (returns.ts): each under a reference of ours (the transfer's id, or the return's reversal
// id), which the partner deduplicates by, so the partner's truth is always one look-up away. One
// call's answer becomes the next step by the table of outcome.ts; a payment not final yet is polled
// with a bounded backoff, then the instruction is re-queued.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import type { PartnerClient, PartnerPayment } from '../../src/partners/client';
import { isPartnerError } from '../../src/partners/errors';
import { decidePartnerOutcome, type Followed, type PartnerDecision } from './outcome';
import { wallNowMs } from '../../src/clock';

/** Poll backoff: 25, 50, 100, 200, 400, 500, 500... ms between looks at a pending payment. */
export const POLL_BACKOFF_MS_INITIAL = 25;
export const POLL_BACKOFF_MS_MAX = 500;

/** What carrying an instruction needs: the ledger's database (claims.ts), the partners' clients, and its bounds. */
export interface CarryDeps {
  db: Knex;
  /** One client per partner slug, created once (dispatcher.ts createPartnerClients). */
  clients: ReadonlyMap<string, PartnerClient>;
  pollMsMax: number;
  /** The wait before an attempt past ATTEMPTS_MAX, so a partner down for minutes is not asked in a tight loop. */
  requeuePauseMs: number;
}

/** What one instruction sends on: a result to the ledger, itself back with this attempt, or nothing (stale, or finished). */
export type Output = { kind: 'result'; command: LedgerCommandEnvelope } | { kind: 'requeue'; attempt: number } | { kind: 'none' };

/** One call to the partner, its answer (or failure) turned into the next step. */
export async function ask(followed: Followed, paymentId: string | null, call: () => Promise<PartnerPayment>): Promise<PartnerDecision> {
  try {
    return decidePartnerOutcome(followed, { kind: 'payment', payment: await call() });
  } catch (error) {
    return decidePartnerOutcome(followed, { kind: 'error', error, paymentId });
  }
}

/** Looks at a pending payment with a bounded backoff until it is final or pollMsMax elapses. */
export async function poll(client: PartnerClient, followed: Followed, paymentId: string, pollMsMax: number): Promise<PartnerDecision> {
  const deadlineMs = wallNowMs() + pollMsMax;
  for (let backoffMs = POLL_BACKOFF_MS_INITIAL; ; backoffMs = Math.min(POLL_BACKOFF_MS_MAX, backoffMs * 2)) {
    const waitMs = Math.min(backoffMs, deadlineMs - wallNowMs());
    if (waitMs <= 0) return decidePartnerOutcome(followed, { kind: 'poll_timeout', paymentId });
    await sleep(waitMs);
    const decision = await ask(followed, paymentId, () => client.getPayment(paymentId));
    if (decision.kind !== 'poll') return decision;
  }
}

/** What the partner holds under the reference, as a decision; an unreachable partner: requeue. */
export async function lookUp(client: PartnerClient, followed: Followed): Promise<{ payment: PartnerPayment | null } | { unreachable: PartnerDecision }> {
  try {
    return { payment: await client.findPaymentByReference(followed.transfer_id) };
  } catch (error) {
    if (!isPartnerError(error)) throw error;
    // A partner that cannot be asked (or answers what we cannot read) confirms nothing: ask again on the next attempt.
    return { unreachable: { kind: 'requeue' } };
  }
}

/** Follows a payment the partner holds: its final status, or a requeue while it is not final. */
export async function follow(client: PartnerClient, followed: Followed, payment: PartnerPayment, pollMsMax: number): Promise<PartnerDecision> {
  const decision = decidePartnerOutcome(followed, { kind: 'payment', payment });
  return decision.kind === 'poll' ? poll(client, followed, decision.paymentId, pollMsMax) : decision;
}

/**
 * Carries one claimed instruction as far as the partner allows now: what the partner holds under
 * the reference is followed; with nothing there, `submit` asks for it. A failure is sent only on
 * the partner's word that it holds nothing under the reference (a `confirm`).
 */
export async function carry(client: PartnerClient, followed: Followed, pollMsMax: number, submit: () => Promise<PartnerPayment>): Promise<PartnerDecision> {
  const found = await lookUp(client, followed);
  let decision: PartnerDecision;
  if (!('payment' in found)) decision = found.unreachable;
  else if (found.payment !== null) decision = await follow(client, followed, found.payment, pollMsMax);
  else {
    decision = await ask(followed, null, submit);
    if (decision.kind === 'poll') decision = await poll(client, followed, decision.paymentId, pollMsMax);
  }
  if (decision.kind === 'confirm') {
    // Fail only on the partner's word that it holds nothing; if it holds it, follow it.
    const confirmed = await lookUp(client, followed);
    if (!('payment' in confirmed)) decision = { kind: 'requeue' };
    else if (confirmed.payment !== null) decision = await follow(client, followed, confirmed.payment, pollMsMax);
    else decision = { kind: 'result', result: decision.result };
  }
  return decision;
}

/** The output of an instruction's last decision: its result as a ledger command (`toLedger`), or itself again, its attempt counted. */
export function outputOf(decision: PartnerDecision, attempt: number, toLedger: (result: TransferPartnerResult) => LedgerCommandEnvelope): Output {
  switch (decision.kind) {
    case 'result':
      return { kind: 'result', command: toLedger(decision.result) };
    case 'requeue':
      return { kind: 'requeue', attempt: attempt + 1 };
    case 'poll':
    case 'confirm':
      throw new Error(`a ${decision.kind} decision outlived its step`);
  }
}
