// One partner's payment book: validation, idempotency by the caller's reference, the sandbox
// failure scenarios a caller asks for by name (src/partners/scenarios.ts) and the status a
// payment reaches over time.
import { randomBytes } from 'node:crypto';
import BigNumber from 'bignumber.js';
import { setBounded } from './bounded';
import { RailError } from './http';
import { isSandboxScenario, SANDBOX_SCENARIOS, type SandboxScenario } from '../partners/scenarios';
import { currencyScale, type PartnerProfile, type PaymentStatus } from './partners';

/** Bound of the payment table; past it new payments are refused with 507. */
export const PAYMENTS_MAX = 100_000;
/** Bound of the per-reference outage attempt counters; the oldest counter is forgotten first. */
export const OUTAGE_REFERENCES_MAX = 10_000;
/** Submits of a reference in the outage scenario that fail before one succeeds. */
export const OUTAGE_FAILURES = 2;
export const REFERENCE_LENGTH_MAX = 128;
/** An unclaimed claim link expires this long after the payment was made. */
export const CLAIM_TTL_MS_DEFAULT = 24 * 60 * 60 * 1000;

const DECIMAL_AMOUNT = /^\d{1,20}(?:\.\d{1,18})?$/;
const CURRENCY_CODE = /^[A-Z]{3,4}$/;

/** The payment as the partner API shows it. */
export interface PaymentView {
  id: string;
  reference: string;
  amount: string;
  currency: string;
  status: PaymentStatus;
  created_at: string;
  tx_hash?: string;
  claim_link?: string;
}

interface PaymentRecord {
  view: PaymentView;
  /** A status change due at a time (chain confirmation, open-banking settlement, reversal). */
  transition: { status: PaymentStatus; atMs: number } | null;
  /** The user whose token submitted it: a customer of the client, or the client itself. */
  ownerUserId: number;
  scenario: SandboxScenario | null;
  /** When the payment completed, which is when the partner settled it with the client. */
  settledAtMs: number | null;
}

/** A payment the partner settled, as its statement needs it (statements.ts). */
export interface SettledPayment {
  view: PaymentView;
  ownerUserId: number;
  scenario: SandboxScenario | null;
  settledAtMs: number;
}

interface SubmitRequest {
  reference: string;
  amount: string;
  currency: string;
  scenario: SandboxScenario | null;
}

export interface PaymentBookOptions {
  chainConfirmMs: number;
  /** Base of claim links, e.g. http://127.0.0.1:4000 (known only once the server listens). */
  publicUrl: () => string;
  /** How long a claim link can be claimed; unclaimed, the payment expires. */
  claimTtlMs?: number;
  nowMs?: () => number;
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string): RailError {
  return new RailError(400, 'invalid_request', message);
}

function parseSubmit(body: Record<string, unknown>): SubmitRequest {
  const { reference, amount, currency, beneficiary, metadata, scenario } = body;
  if (typeof reference !== 'string' || reference.length === 0 || reference.length > REFERENCE_LENGTH_MAX) {
    throw invalid(`reference must be a string of 1 to ${REFERENCE_LENGTH_MAX} characters`);
  }
  if (typeof amount !== 'string' || !DECIMAL_AMOUNT.test(amount)) {
    throw invalid('amount must be a decimal string such as "10.00"');
  }
  if (!new BigNumber(amount).isGreaterThan(0)) throw invalid('amount must be greater than zero');
  if (typeof currency !== 'string' || !CURRENCY_CODE.test(currency)) {
    throw invalid('currency must be an upper-case currency code such as "USD"');
  }
  if (beneficiary !== undefined && !isPlainObject(beneficiary)) throw invalid('beneficiary must be an object');
  if (metadata !== undefined && !isPlainObject(metadata)) throw invalid('metadata must be an object');
  if (scenario !== undefined && !isSandboxScenario(scenario)) throw invalid(`scenario must be one of ${SANDBOX_SCENARIOS.join(', ')}`);
  return { reference, amount, currency, scenario: scenario ?? null };
}

export class PaymentBook {
  private readonly payments = new Map<string, PaymentRecord>();
  private readonly paymentIdByReference = new Map<string, string>();
  private readonly outageAttemptsByReference = new Map<string, number>();
  private readonly nowMs: () => number;

  constructor(private readonly profile: PartnerProfile, private readonly options: PaymentBookOptions) {
    this.nowMs = options.nowMs ?? Date.now;
  }

  /**
   * POST /v1/payments. The checks run in this order: request shape (400 invalid_request),
   * currency (400 unsupported_currency), scale (400 invalid_request), an earlier payment with the
   * same reference (200, or 409 reference_conflict when amount or currency differ), then the
   * scenario asked for (503, 422, 500), then a new payment (201; in lost_answer created, but
   * answered 500).
   */
  submit(body: Record<string, unknown>, ownerUserId: number): { created: boolean; payment: PaymentView } {
    const request = parseSubmit(body);
    if (!this.profile.currencies.includes(request.currency)) {
      throw new RailError(400, 'unsupported_currency', `${this.profile.slug} does not handle ${request.currency}`);
    }
    const amount = new BigNumber(request.amount);
    const scale = currencyScale(request.currency);
    if ((amount.decimalPlaces() ?? 0) > scale) {
      throw invalid(`${request.currency} amounts have at most ${scale} decimal places`);
    }
    const existingId = this.paymentIdByReference.get(request.reference);
    if (existingId !== undefined) return { created: false, payment: this.replay(existingId, request, amount) };
    this.actOut(request);
    const payment = this.create(request, amount.toFixed(scale), ownerUserId);
    if (request.scenario === 'lost_answer') {
      throw new RailError(500, 'internal', 'the payment was created but the answer was lost (sandbox scenario lost_answer)');
    }
    return { created: true, payment };
  }

  /** GET /v1/payments/{id}: 404 not_found for an id this partner never issued. */
  get(id: string): PaymentView {
    return this.advance(this.find(id));
  }

  /** The payment a claim link is for, as its payee sees it. */
  claimable(id: string): PaymentView {
    return this.advance(this.find(id));
  }

  /** The payee claims on the claim page: a pending claimless payment completes. */
  claim(id: string): PaymentView {
    const record = this.find(id);
    const status = this.advance(record).status;
    if (status !== 'pending') throw new RailError(409, 'not_claimable', `payment is ${status}`);
    record.view.status = 'completed';
    record.transition = null;
    record.settledAtMs = this.nowMs();
    return { ...record.view };
  }

  /** Sandbox control: an unclaimed claim link expires now. */
  expireClaim(id: string): PaymentView {
    const record = this.find(id);
    if (this.advance(record).status !== 'pending' || !record.view.claim_link) throw new RailError(409, 'not_claimable', `payment is ${record.view.status}`);
    record.view.status = 'expired';
    record.transition = null;
    return { ...record.view };
  }

  private find(id: string): PaymentRecord {
    const record = this.payments.get(id);
    if (!record) throw new RailError(404, 'not_found', `no payment ${id}`);
    return record;
  }

  /** Applies a status change that has come due, then returns a copy of the view. */
  private advance(record: PaymentRecord): PaymentView {
    if (record.transition !== null && this.nowMs() >= record.transition.atMs) {
      record.view.status = record.transition.status;
      if (record.view.status === 'completed') record.settledAtMs = record.transition.atMs;
      record.transition = null;
    }
    return { ...record.view };
  }

  private replay(id: string, request: SubmitRequest, amount: BigNumber): PaymentView {
    const view = this.get(id);
    if (view.currency !== request.currency || !amount.isEqualTo(view.amount)) {
      throw new RailError(409, 'reference_conflict', `reference ${request.reference} was used for ${view.amount} ${view.currency}`);
    }
    return view;
  }

  /** The failures of the scenario asked for that come before a payment exists. */
  private actOut(request: SubmitRequest): void {
    switch (request.scenario) {
      case 'decline':
        throw new RailError(422, 'declined', 'the beneficiary bank declined the payment (sandbox scenario decline)');
      case 'error':
        throw new RailError(500, 'internal', 'unexpected partner error (sandbox scenario error)');
      case 'unavailable':
        throw new RailError(503, 'temporarily_unavailable', 'the partner is down (sandbox scenario unavailable)', { 'retry-after': '0' });
      case 'outage': {
        const attempts = (this.outageAttemptsByReference.get(request.reference) ?? 0) + 1;
        setBounded(this.outageAttemptsByReference, request.reference, attempts, OUTAGE_REFERENCES_MAX);
        if (attempts <= OUTAGE_FAILURES) {
          throw new RailError(503, 'temporarily_unavailable', undefined, { 'retry-after': '0' });
        }
        return;
      }
      case 'lost_answer': // decided after the payment exists (submit)
      case 'reverse':
      case 'statement_missing': // the statement scenarios act out on the statement only
      case 'statement_duplicate':
      case 'statement_fee':
      case 'statement_late':
      case 'statement_batched':
      case null:
        return;
    }
  }

  /** Every payment that settled between the two instants (milliseconds, from inclusive, to exclusive). */
  settledBetween(fromMs: number, toMs: number): SettledPayment[] {
    const settled: SettledPayment[] = [];
    for (const record of this.payments.values()) {
      this.advance(record);
      const at = record.settledAtMs;
      if (at !== null && at >= fromMs && at < toMs) settled.push({ view: { ...record.view }, ownerUserId: record.ownerUserId, scenario: record.scenario, settledAtMs: at });
    }
    return settled.sort((a, b) => a.settledAtMs - b.settledAtMs || a.view.id.localeCompare(b.view.id));
  }

  private create(request: SubmitRequest, amount: string, ownerUserId: number): PaymentView {
    if (this.payments.size >= PAYMENTS_MAX) {
      throw new RailError(507, 'insufficient_storage', `the sandbox holds at most ${PAYMENTS_MAX} payments per partner`);
    }
    const id = `${this.profile.slug}_${randomBytes(12).toString('hex')}`;
    const reversed = request.scenario === 'reverse';
    const view: PaymentView = {
      id,
      reference: request.reference,
      amount,
      currency: request.currency,
      // A payment that will be reversed is never final at submission, even on fiat.
      status: reversed ? 'pending' : this.profile.submitStatus,
      created_at: new Date(this.nowMs()).toISOString(),
    };
    if (this.profile.issuesTxHash) view.tx_hash = `0x${randomBytes(32).toString('hex')}`;
    if (this.profile.issuesClaimLink) view.claim_link = `${this.options.publicUrl()}/${this.profile.slug}/claim/${id}`;
    const laterStatus = reversed ? 'reversed' : this.profile.settledStatus;
    const transition = laterStatus !== null ? { status: laterStatus, atMs: this.nowMs() + this.options.chainConfirmMs }
      : this.profile.issuesClaimLink ? { status: 'expired' as const, atMs: this.nowMs() + (this.options.claimTtlMs ?? CLAIM_TTL_MS_DEFAULT) }
        : null;
    const settledAtMs = view.status === 'completed' ? this.nowMs() : null;
    this.payments.set(id, { view, transition, ownerUserId, scenario: request.scenario, settledAtMs });
    this.paymentIdByReference.set(request.reference, id);
    this.outageAttemptsByReference.delete(request.reference);
    return { ...view };
  }
}
