// One partner's payment book: validation, idempotency by the caller's reference, the sandbox
// failure scenarios a caller asks for by name (src/partners/scenarios.ts) and the status a
// payment reaches over time. A return of part of a completed payment is a payment of its own
// (`returns` names the payment it gives back), on the statement as a line of its own. Kept in the
// partner's books (schema.ts), so that a restart changes no payment and no statement.
import { randomBytes } from 'node:crypto';
import BigNumber from 'bignumber.js';
import type { Knex } from 'knex';
import { SCHEMA, type PartnerBook } from './schema';
import { RailError } from './http';
import type { SandboxScenario } from '../partners/scenarios';
import { amountOf, invalid, parseSubmit, replay, type SubmitRequest } from './payment-requests';
import { currencyScale, type PartnerProfile, type PaymentStatus } from './partners';

/** Submits of a reference in the outage scenario that fail before one succeeds. */
export const OUTAGE_FAILURES = 2;
/** An unclaimed claim link expires this long after the payment was made. */
export const CLAIM_TTL_MS_DEFAULT = 24 * 60 * 60 * 1000;

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
  /** A return: the partner's id of the payment it gives back part of. */
  returns?: string;
  /** What the caller said to pay with it, as it said it. */
  beneficiary?: object;
  metadata?: object;
}

/** A payment the partner settled, as its statement needs it (statements.ts): no more than that, for a day of 100,000. */
export interface SettledPayment {
  id: string;
  reference: string;
  /** Decimal text at the currency's scale, as the payment was made. */
  amount: string;
  currency: string;
  scenario: SandboxScenario | null;
  /** A return: the payment it gives back part of; null for a payment. */
  returns: string | null;
  /** ISO 8601, to the microsecond. */
  settled_at: string;
}

/** Where a statement page goes on from: the last payment of the page before. */
export interface SettledCursor { settledAt: string; id: string }

/**
 * What a statement day lists: payments settled from `fromMs` (inclusive) to `toMs` (exclusive),
 * but those of the `late` scenario settled in its own range instead. Every payment on the
 * client's accounts is listed: its customers' through their links and the client's own transfers.
 */
export interface StatementDay {
  fromMs: number;
  toMs: number;
  late: { scenario: SandboxScenario; fromMs: number; toMs: number };
}

export interface PaymentBookOptions {
  chainConfirmMs: number;
  /** Base of claim links, e.g. http://127.0.0.1:4000 (known only once the server listens). */
  publicUrl: () => string;
  /** How long a claim link can be claimed; unclaimed, the payment expires. */
  claimTtlMs?: number;
  nowMs?: () => number;
}

interface PaymentRow {
  id: string;
  reference: string;
  amount: string;
  currency: string;
  status: PaymentStatus;
  created_at: Date;
  tx_hash: string | null;
  claim_link: string | null;
  owner_user_id: string;
  scenario: SandboxScenario | null;
  settled_at: Date | null;
  beneficiary: object | null;
  metadata: object | null;
  returns: string | null;
}

function viewOf(row: PaymentRow): PaymentView {
  const view: PaymentView = {
    id: row.id, reference: row.reference, amount: row.amount, currency: row.currency, status: row.status, created_at: row.created_at.toISOString(),
  };
  if (row.tx_hash !== null) view.tx_hash = row.tx_hash;
  if (row.claim_link !== null) view.claim_link = row.claim_link;
  if (row.returns !== null) view.returns = row.returns;
  if (row.beneficiary !== null) view.beneficiary = row.beneficiary;
  if (row.metadata !== null) view.metadata = row.metadata;
  return view;
}

const COLUMNS = 'id, reference, amount, currency, status, created_at, tx_hash, claim_link, owner_user_id, scenario, settled_at, beneficiary, metadata, returns';

export class PaymentBook {
  private readonly nowMs: () => number;

  constructor(private readonly profile: PartnerProfile, private readonly books: PartnerBook, private readonly options: PaymentBookOptions) {
    this.nowMs = options.nowMs ?? Date.now;
  }

  /**
   * POST /v1/payments. The checks run in this order: request shape (400 invalid_request),
   * currency (400 unsupported_currency), scale (400 invalid_request), an earlier payment with the
   * same reference (200, or 409 reference_conflict when amount or currency differ), then the
   * scenario asked for (503, 422, 500), then a new payment (201; in lost_answer created, but
   * answered 500).
   */
  async submit(body: Record<string, unknown>, ownerUserId: number): Promise<{ created: boolean; payment: PaymentView }> {
    const request = parseSubmit(body);
    return this.make(request, amountOf(this.profile, request), ownerUserId, null);
  }

  /**
   * POST /v1/payments/{id}/returns: part of a completed payment of the caller's given back, a
   * payment of its own under the caller's reference. The checks run in this order: request shape
   * (400), the payment (404 not_found, also another user's; 409 not_returnable unless it completed
   * and is no return itself), the payment's currency (400 invalid_request), then as a payment: an
   * earlier return under the reference, more than is left of the payment (422 return_exceeded, so a
   * caller's error is a decline), the scenario asked for, a new return. Two returns of one payment
   * racing are not held apart here: the ledger sends one at a time.
   */
  async submitReturn(paymentId: string, body: Record<string, unknown>, ownerUserId: number): Promise<{ created: boolean; payment: PaymentView }> {
    const request = parseSubmit(body);
    await this.advanceDue(paymentId);
    const payment = await this.payments().where({ id: paymentId }).first(COLUMNS.split(', ')) as PaymentRow | undefined;
    if (!payment || Number(payment.owner_user_id) !== ownerUserId) throw new RailError(404, 'not_found', `no payment ${paymentId}`);
    if (payment.status !== 'completed' || payment.returns !== null) throw new RailError(409, 'not_returnable', `payment ${paymentId} is ${payment.returns === null ? payment.status : 'a return'}: only a completed payment is returned`);
    if (request.currency !== payment.currency) throw invalid(`a return of payment ${paymentId} is in its currency, ${payment.currency}`);
    return this.make(request, amountOf(this.profile, request), ownerUserId, payment);
  }

  /** A payment (or a return of `returned`) made under the request's reference, or the one made under it already. */
  private async make(request: SubmitRequest, amount: BigNumber, ownerUserId: number, returned: PaymentRow | null): Promise<{ created: boolean; payment: PaymentView }> {
    const scale = currencyScale(request.currency);
    const existing = await this.byReference(request.reference);
    if (existing !== undefined) return { created: false, payment: replay(existing, request, amount) };
    if (returned !== null) {
      const { sum } = await this.payments().where({ returns: returned.id }).whereNot('status', 'reversed').first(this.books.db.raw('coalesce(sum(amount), 0)::text AS sum')) as { sum: string };
      const left = new BigNumber(returned.amount).minus(sum);
      if (amount.isGreaterThan(left)) throw new RailError(422, 'return_exceeded', `${left.toFixed(scale)} ${returned.currency} of payment ${returned.id} is left to return`);
    }
    await this.actOut(request);
    const created = await this.create(request, amount.toFixed(scale), ownerUserId, returned?.id ?? null);
    // A submit racing this one with the same reference made the payment first: this is its retry.
    if (created === undefined) return { created: false, payment: replay(await this.find(await this.idOfReference(request.reference)), request, amount) };
    if (request.scenario === 'lost_answer') {
      throw new RailError(500, 'internal', 'the payment was created but the answer was lost (sandbox scenario lost_answer)');
    }
    return { created: true, payment: created };
  }

  /** GET /v1/payments?reference=: the payment made under the caller's reference; 404 not_found when none was. */
  /** GET /v1/payments/{id}: 404 not_found for an id this partner never issued. */
  get(id: string): Promise<PaymentView> {
    return this.find(id);
  }

  /** GET /v1/payments?reference=: the payment made under `reference`; 404 not_found when there is none. */
  async getByReference(reference: string): Promise<PaymentView> {
    const found = await this.byReference(reference);
    if (found === undefined) throw new RailError(404, 'not_found', 'no payment under this reference');
    return found;
  }

  /** The payment a claim link is for, as its payee sees it. */
  claimable(id: string): Promise<PaymentView> {
    return this.find(id);
  }

  /** The payee claims on the claim page: a pending claimless payment completes. */
  claim(id: string): Promise<PaymentView> {
    return this.finish(id, { status: 'completed', settled_at: new Date(this.nowMs()) });
  }

  /** Sandbox control: an unclaimed claim link expires now. */
  expireClaim(id: string): Promise<PaymentView> {
    return this.finish(id, { status: 'expired' }, 'claim_link IS NOT NULL');
  }

  /** Sandbox control: the client stops a payment not paid yet; it ends reversed and never settles. */
  cancel(id: string): Promise<PaymentView> {
    return this.finish(id, { status: 'reversed' }, 'true', ['pending', 'authorized'], 'not_cancellable');
  }

  /**
   * Sandbox control: a payment not final yet settles now (its statement lists it today). Refused
   * 409 not_settleable once it has ended, and while it is on its way to being reversed: the
   * partner does not settle what it will reverse.
   */
  settle(id: string): Promise<PaymentView> {
    return this.finish(id, { status: 'completed', settled_at: new Date(this.nowMs()) }, "due_status IS DISTINCT FROM 'reversed'", ['pending', 'authorized'], 'not_settleable');
  }

  /** A page of the payments a statement day lists a line for, in settlement order after `after`: at most `limit`. */
  async settledPage(day: StatementDay, after: SettledCursor | null, limit: number): Promise<SettledPayment[]> {
    await this.advanceDue();
    // Two ranges of the settlement index (payments_settled_order), each read in order after the
    // cursor and cut at the page's size, then merged: an OR of them would read on past the day
    // for its last page, and Postgres orders a union of them only by sorting all it holds.
    const page = (range: Knex.QueryBuilder) => {
      if (after !== null) void range.whereRaw('(settled_at, id) > (?::timestamptz, ?)', [after.settledAt, after.id]);
      return range.orderBy([{ column: 'settled_at' }, { column: 'id' }]).limit(limit);
    };
    const onTime = page(this.settledIn(day.fromMs, day.toMs)
      .whereRaw(`coalesce(scenario, '') NOT IN ('statement_missing', 'statement_batched', ?)`, [day.late.scenario]));
    const late = page(this.settledIn(day.late.fromMs, day.late.toMs).where('scenario', day.late.scenario));
    const merged = this.books.db.queryBuilder().from(this.books.db.queryBuilder().unionAll([onTime, late], true).as('p'));
    // By the columns (p.), not the page's text form of settled_at that the select list names alike.
    return this.settled(merged.orderBy([{ column: 'p.settled_at' }, { column: 'p.id' }]).limit(limit));
  }

  /** The payments a statement day settles in a batch, in settlement order. */
  async settledInBatches(day: StatementDay): Promise<SettledPayment[]> {
    return this.settled(this.settledIn(day.fromMs, day.toMs).where('scenario', 'statement_batched').orderBy([{ column: 'settled_at' }, { column: 'id' }]));
  }

  /** Payments settled from `fromMs` (inclusive) to `toMs` (exclusive). */
  private settledIn(fromMs: number, toMs: number) {
    return this.payments().where('settled_at', '>=', new Date(fromMs)).where('settled_at', '<', new Date(toMs))
      .select('id', 'reference', 'amount', 'currency', 'scenario', 'returns', 'settled_at');
  }

  private async settled(query: Knex.QueryBuilder): Promise<SettledPayment[]> {
    // The instant as text to the microsecond (a page's cursor), never parsed as a date.
    return await query.clearSelect().select('id', 'reference', this.books.db.raw('amount::text AS amount'), 'currency', 'scenario', 'returns',
      this.books.db.raw(`to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS settled_at`)) as SettledPayment[];
  }

  /** The payment with `id`, with any status change that has come due applied first. */
  private async find(id: string): Promise<PaymentView> {
    await this.advanceDue(id);
    const row = await this.payments().where({ id }).first(COLUMNS.split(', ')) as PaymentRow | undefined;
    if (!row) throw new RailError(404, 'not_found', `no payment ${id}`);
    return viewOf(row);
  }

  /** Moves a payment still `from` (and `condition`) to its end now; 409 `refusal` otherwise. */
  private async finish(id: string, change: { status: PaymentStatus; settled_at?: Date }, condition = 'true',
    from: readonly PaymentStatus[] = ['pending'], refusal = 'not_claimable'): Promise<PaymentView> {
    const current = await this.find(id);
    const [row] = await this.payments().where({ id }).whereIn('status', from).whereRaw(condition)
      .update({ ...change, due_status: null, due_at: null }, COLUMNS.split(', ')) as PaymentRow[];
    if (!row) throw new RailError(409, refusal, `payment is ${current.status}`);
    return viewOf(row);
  }

  /** Applies the status changes that have come due (of one payment, or of every payment). */
  private async advanceDue(id?: string): Promise<void> {
    const due = this.payments().where('due_at', '<=', new Date(this.nowMs()));
    await (id === undefined ? due : due.where({ id })).update({
      status: this.books.db.raw('due_status'),
      settled_at: this.books.db.raw(`CASE WHEN due_status = 'completed' THEN due_at ELSE settled_at END`),
      due_status: null,
      due_at: null,
    });
  }

  private async byReference(reference: string): Promise<PaymentView | undefined> {
    const id = await this.payments().where({ reference }).first('id') as { id: string } | undefined;
    return id === undefined ? undefined : this.find(id.id);
  }

  private async idOfReference(reference: string): Promise<string> {
    const { id } = await this.payments().where({ reference }).first('id') as { id: string };
    return id;
  }

  /** The failures of the scenario asked for that come before a payment exists. */
  private async actOut(request: SubmitRequest): Promise<void> {
    switch (request.scenario) {
      case 'decline':
        throw new RailError(422, 'declined', 'the beneficiary bank declined the payment (sandbox scenario decline)');
      case 'error':
        throw new RailError(500, 'internal', 'unexpected partner error (sandbox scenario error)');
      case 'unavailable':
        throw new RailError(503, 'temporarily_unavailable', 'the partner is down (sandbox scenario unavailable)', { 'retry-after': '0' });
      case 'outage': {
        const { rows } = await this.books.db.raw<{ rows: Array<{ attempts: number }> }>(`
          INSERT INTO ${SCHEMA}.outage_attempts AS o (book, partner, reference, attempts) VALUES (?, ?, ?, 1)
          ON CONFLICT (book, partner, reference) DO UPDATE SET attempts = o.attempts + 1
          RETURNING attempts`, [this.books.book, this.books.partner, request.reference]);
        if (rows[0].attempts <= OUTAGE_FAILURES) {
          throw new RailError(503, 'temporarily_unavailable', undefined, { 'retry-after': '0' });
        }
        return;
      }
      case 'lost_answer': // decided after the payment exists (submit)
      case 'slow_answer': // the answer is delayed by the server (server.ts)
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

  /** A new payment (a return of the payment `returns`), or undefined when its reference was taken meanwhile. */
  private async create(request: SubmitRequest, amount: string, ownerUserId: number, returns: string | null): Promise<PaymentView | undefined> {
    const nowMs = this.nowMs();
    const id = `${this.profile.slug}_${randomBytes(12).toString('hex')}`;
    const reversed = request.scenario === 'reverse';
    // A payment that will be reversed is never final at submission, even on fiat.
    const status = reversed ? 'pending' : this.profile.submitStatus;
    const laterStatus = reversed ? 'reversed' : this.profile.settledStatus;
    // A return goes back to the client's own account: no payee claims it.
    const claimed = this.profile.issuesClaimLink && returns === null;
    const due = laterStatus !== null ? { status: laterStatus, atMs: nowMs + this.options.chainConfirmMs }
      : claimed ? { status: 'expired' as const, atMs: nowMs + (this.options.claimTtlMs ?? CLAIM_TTL_MS_DEFAULT) }
        : null;
    const [row] = await this.books.db(`${SCHEMA}.payments`).insert({
      book: this.books.book, partner: this.books.partner, id, reference: request.reference, amount, currency: request.currency, status,
      created_at: new Date(nowMs),
      tx_hash: this.profile.issuesTxHash ? `0x${randomBytes(32).toString('hex')}` : null,
      claim_link: claimed ? `${this.options.publicUrl()}/${this.profile.slug}/claim/${id}` : null, returns,
      due_status: due?.status ?? null, due_at: due === null ? null : new Date(due.atMs),
      owner_user_id: ownerUserId, scenario: request.scenario, settled_at: status === 'completed' ? new Date(nowMs) : null,
      beneficiary: request.beneficiary === null ? null : JSON.stringify(request.beneficiary),
      metadata: request.metadata === null ? null : JSON.stringify(request.metadata),
    }).onConflict(['book', 'partner', 'reference']).ignore().returning(COLUMNS.split(', ')) as PaymentRow[];
    if (row === undefined) return undefined;
    await this.books.db(`${SCHEMA}.outage_attempts`).where({ book: this.books.book, partner: this.books.partner, reference: request.reference }).delete();
    return viewOf(row);
  }

  private payments() {
    return this.books.db(`${SCHEMA}.payments`).where({ book: this.books.book, partner: this.books.partner });
  }
}
