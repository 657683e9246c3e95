// How a payment route moves a payment (DESIGN.md section 5c): the ledger records it (holding a
// payout's amount), the route submits it to the partner with the customer's link token, and the
// ledger records the partner's answer. A partner still unavailable after the client's retries (or
// a timeout, after which the partner may have made the payment) is a 202 with the payment,
// pending: the settler resubmits it under the same reference on its own (consumers/partners/
// settler.ts), and the same Idempotency-Key submits it again while the settler has not taken it
// over (PAYMENT_RESUBMIT_AFTER_MS). An answer that leaves the outcome unknown is a 502, the
// payment readable while the settler finds out.
import { randomUUID } from 'node:crypto';
import type { PaymentCreate } from '../../ledger/commands/payment-create';
import type { PaymentUpdate } from '../../ledger/commands/payment-update';
import { paymentSubmissionsCommandId, paymentUpdateCommandId, updateFromPartner, type PaymentRecord } from '../../ledger/payments';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import { actingAccountIdForWrite } from '../http/acting-account';
import type { RouteRequest, RouteResult } from '../http/route';
import { derivedUuid } from '../idempotency/derived-ids';
import { RETRY_AFTER_SECONDS } from '../idempotency/guard';
import { paymentView, refusalAnswer, unexpectedOutcome } from '../ledger-client/answers';
import { type LedgerClient } from '../ledger-client/client';
import type { PartnerLinkRow, PartnerLinks } from '../partner-links/links';
import type { PartnerClient, PartnerPayment } from '../partners/client';
import { isPartnerError } from '../partners/errors';
import { markPartnerUnreachable, partnerRequestOf } from '../partners/payment-request';
import { endSubmission, giveBackSubmission, takeSubmission, type UnsentEnd } from '../partners/submission-lease';
import type { PartnerSlug } from '../partners/registry';
import type { SandboxScenario } from '../partners/scenarios';
import type { PaymentReads } from './reads';
import { paymentSchema } from './schema';
import { wallNowMs } from '../clock';

export interface PaymentRouteDeps {
  db: Db;
  ledger: LedgerClient;
  links: PartnerLinks;
  clients: (partner: PartnerSlug) => PartnerClient;
  reads: PaymentReads;
  replyTimeoutMs: number;
  /** PAYMENT_RESUBMIT_AFTER_MS: past it, a pending payment is the settler's to submit. */
  resubmitAfterMs: number;
}

/** Tells the ledger what became of a payment; the payment as the ledger then holds it. */
export async function recordPaymentUpdate(deps: PaymentRouteDeps, payment: PaymentRecord, update: PaymentUpdate): Promise<PaymentRecord> {
  const decision = await deps.ledger.execute('payment.update', paymentUpdateCommandId(payment.id, update.status), payment.account_id, update, deps.replyTimeoutMs);
  // The ledger's answer shows what an answer shows (ledger/outcome.ts); what it does not show
  // (the account, the command, the count of submissions) the routes read no further.
  if (decision?.outcome.kind === 'payment') return { ...payment, ...decision.outcome.payment };
  return (await deps.reads.byId(payment.id)) ?? payment;
}

/** The answer while the ledger has not recorded the payment yet: repeat with the same key. */
export function pendingAnswer(paymentId: string): RouteResult {
  return { status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: { id: paymentId, status: 'pending' } };
}

/** The answer while the partner cannot be reached: the payment, pending, which the service resubmits on its own. */
export function resubmittedAnswer(payment: PaymentRecord): RouteResult {
  return { status: 202, final: false, headers: { 'Retry-After': RETRY_AFTER_SECONDS }, body: paymentView(payment) };
}

/** The 202 a payment route answers to a duplicate while the first request runs: repeat to learn more. */
export async function provisionalPayment(db: Db, reads: PaymentReads, request: RouteRequest): Promise<RouteResult> {
  const { paymentId } = paymentIds(await actingAccountIdForWrite(request, db), request.idempotencyKey!);
  const recorded = await reads.byId(paymentId);
  return recorded?.status === 'pending' ? resubmittedAnswer(recorded) : pendingAnswer(paymentId);
}

export const PENDING_PAYMENT_SCHEMA = {
  type: 'object', required: ['id', 'status'],
  description: 'the payment, pending, with every field of a Payment once the ledger has recorded it (only id and status before)',
  properties: { ...paymentSchema.properties, status: { type: 'string', const: 'pending' } },
};

export const PENDING_PAYMENT_DESCRIPTION = 'pending, provisional and not stored: the ledger has not decided yet, or the partner could not be reached '
  + '(unavailable or no answer in time; it may have made the payment). The service resubmits a recorded payment to the partner under the same '
  + 'reference on its own, never paying twice, until the partner answers; repeat the request with the same Idempotency-Key after Retry-After '
  + 'seconds, or follow GET /v1/payments/{id}. Never retry under a new key: that makes a second payment';

/** The ids of the payment a request creates: a repeated request names the same. */
export function paymentIds(accountId: string, idempotencyKey: string): { commandId: string; paymentId: string } {
  const commandId = derivedUuid('payment.create', accountId, idempotencyKey);
  return { commandId, paymentId: derivedUuid('payment', commandId) };
}

/** The funding method named, or the customer's default in the currency. @throws DomainError invalid_request */
export async function fundingMethodFor(links: PartnerLinks, link: PartnerLinkRow, named: string | undefined, currency: string): Promise<string | null> {
  const methods = await links.fundingMethods(link);
  if (named === undefined) return (methods.find((m) => m.currency === currency) ?? methods.find((m) => m.default))?.external_id ?? null;
  const method = methods.find((m) => m.external_id === named);
  if (!method) throw new DomainError('invalid_request', 'the customer has no such funding method at the partner', 'source_funding_method_external_id');
  // A method in another currency cannot fund this payment: the partner would collect or pay the wrong money.
  if (method.currency !== currency) {
    throw new DomainError('invalid_currency', `the funding method is in ${method.currency}, the payment in ${currency}`, 'source_funding_method_external_id');
  }
  return named;
}

/** Records the payment, submits it, records the answer; the route's answer. */
export async function createAndSubmit(
  deps: PaymentRouteDeps, accountId: string, commandId: string, create: PaymentCreate, link: PartnerLinkRow,
  submission: { scenario: SandboxScenario | null },
): Promise<RouteResult> {
  const { ledger, reads, replyTimeoutMs } = deps;
  const decision = await ledger.execute('payment.create', commandId, accountId, create, replyTimeoutMs);
  if (!decision) return pendingAnswer(create.payment_id);
  const created = decision.outcome;
  if (created.kind === 'refused') return refusalAnswer(created);
  if (created.kind !== 'payment') return unexpectedOutcome(created);
  // A repeated request finds the payment as it is now; only one the partner has not accepted is submitted (again).
  // The ledger wrote it before it answered: not found, it can only be shown as the ledger decided it.
  const current = await reads.byId(create.payment_id);
  if (!current) return { status: 201, body: paymentView(created.payment) };
  if (current.status !== 'pending') return { status: 201, body: paymentView(current) };
  if (wallNowMs() - current.created_at.getTime() >= deps.resubmitAfterMs) return resubmittedAnswer(current);
  // Another submitter has it (a repeated request, or the settler), or a decline of it is on record: the settler ends it.
  const lease = (await takeSubmission(deps.db, current.id))?.token ?? null;
  if (lease === null) return resubmittedAnswer((await reads.byId(current.id)) ?? current);
  try {
    return await submitHeld(deps, current, link, submission, lease);
  } finally {
    await giveBackSubmission(deps.db, current.id, lease);
  }
}

/** Submits a payment this request holds the lease of, and records the partner's answer. */
async function submitHeld(
  deps: PaymentRouteDeps, current: PaymentRecord, link: PartnerLinkRow, submission: { scenario: SandboxScenario | null }, lease: string,
): Promise<RouteResult> {
  const { links, clients, reads } = deps;
  const partner = current.partner as PartnerSlug;
  // Every submission is counted by the ledger, with the answer it got or, when it got none to
  // record (503, an unknown outcome), on its own: retry_count is all of them less the first.
  const sent = { submissions: 0 };
  const record = (update: Omit<PaymentUpdate, 'payment_id' | 'retry_count'>) =>
    recordPaymentUpdate(deps, current, { ...update, payment_id: current.id, retry_count: current.retry_count, submissions: sent.submissions });
  const countSubmissions = async () => {
    if (sent.submissions === 0) return;
    const update: PaymentUpdate = {
      payment_id: current.id, status: 'pending', external_id: null, claim_link: null, failure_code: null, failure_message: null,
      retry_count: current.retry_count, submissions: sent.submissions,
    };
    // Best effort: the answer to the client (503, 502) stands whether or not the count is recorded.
    await deps.ledger.execute('payment.update', paymentSubmissionsCommandId(current.id, randomUUID()), current.account_id, update, deps.replyTimeoutMs)
      .catch(() => undefined);
  };
  let submitted: PartnerPayment;
  try {
    submitted = await links.withToken(link, (token) => clients(partner).submitPaymentAs(token, partnerRequestOf(current, submission.scenario), sent));
  } catch (error) {
    if (!isPartnerError(error)) throw error;
    if (error.kind !== 'declined' && error.kind !== 'rejected') await countSubmissions();
    // Unreachable, or no answer in time: the partner may have made the payment. The settler
    // resubmits it under the same reference, so the answer says it is pending, not that nothing moved.
    if (error.kind === 'unavailable') {
      await markPartnerUnreachable(deps.db, current.id);
      return resubmittedAnswer((await reads.byId(current.id)) ?? current);
    }
    if (error.kind === 'declined' || error.kind === 'rejected') {
      // Written down before the ledger hears of it, so that no later submitter sends it again;
      // a request that outlived its lease knows no more than that the payment is pending.
      const end: UnsentEnd = { status: 'failed', failure_code: 'partner_declined', failure_message: error.message };
      if (!(await endSubmission(deps.db, current.id, lease, end))) return resubmittedAnswer((await reads.byId(current.id)) ?? current);
      const failed = await record({ ...end, external_id: null, claim_link: null });
      return { status: 201, body: paymentView(failed) };
    }
    throw new DomainError('partner_error', `${partner} answered unexpectedly; the payment may or may not have been made: check GET /v1/payments/${current.id}`, current.id);
  }
  const update = updateFromPartner(current, submitted);
  const updated = update ? await record(update) : current;
  return { status: 201, body: paymentView(updated) };
}
