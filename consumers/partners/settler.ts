// Follows payments at their partner until they end (DESIGN.md section 5c): a payment the partner
// has accepted (`sent`, `authorized`) is polled, and its progress (`authorized`, `completed`, a
// reversal, an expired claim link) goes to the ledger as a payment.update command. A payment
// still `pending` a while after it was recorded (the partner was unreachable, its answer was lost,
// or the request's process died) is submitted again under the same reference, with every field
// of the original (payee, funding method, purpose): the partner answers with the payment if it
// had made it, and makes it otherwise, as the client was told (202 pending). It submits only under
// the payment's submission lease (src/partners/submission-lease.ts), never beside the request that
// is still submitting it, and never a payment another submitter has ended (declined, failed).
//
// Every open state ends. Nothing is called failed while the partner may have made the payment:
// past the deadline, or once the customer's link is revoked, the partner is asked (with the
// client's own token) for the payment under our reference, and only a payment it never made is
// failed, its hold released. Nor because the partner was away: the deadline counts from the last
// time a submission or lookup could not reach the partner, or a submitter that went away held the
// payment's lease (partner_unreachable_at), so a payment caught in an outage longer than the
// deadline stays pending and held, and is resubmitted for a whole deadline once the partner is
// back. One it made is followed with the client's own token when the link
// is gone, until the partner ends it (a claim link expires, a payment settles or is reversed).
//
// Each partner is settled by a lane of its own, with its own concurrency and its own time
// budget a round, so a partner that is down or slow delays only its own payments; a lane runs
// only when its partner has payments due. A lane takes
// the payments that are due (next_poll_at), and each poll moves next_poll_at on whether or not
// anything changed, so payments that never change cannot take every turn. Command ids name the
// payment and the status, so several settlers (or a repeated poll) can only say each thing
// once: the ledger keeps the first.
import { setTimeout as sleep } from 'node:timers/promises';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import type { PaymentUpdate } from '../../ledger/commands/payment-update';
import { paymentSubmissionsCommandId, paymentUpdateCommandId, updateFromPartner, type PaymentRecord } from '../../ledger/payments';
import { randomUUID } from 'node:crypto';
import { DomainError } from '../../src/domain-error';
import { TOPICS } from '../../src/kafka/topics';
import { log } from '../../src/log';
import type { PartnerLinkRow, PartnerLinks } from '../../src/partner-links/links';
import type { PartnerClient, PartnerPayment } from '../../src/partners/client';
import { isPartnerError } from '../../src/partners/errors';
import { markPartnerUnreachable, partnerRequestOf } from '../../src/partners/payment-request';
import { endSubmission, giveBackSubmission, takeSubmission, type UnsentEnd } from '../../src/partners/submission-lease';
import { PARTNER_SLUGS, type PartnerSlug } from '../../src/partners/registry';
import type { Runtime } from '../../src/runtime';
import { testClockOf, wallNow, wallNowMs } from '../../src/clock';

/** Payments a lane takes in one round. */
const LANE_BATCH_MAX = 100;
/** Partner calls of one lane at once. */
const LANE_CONCURRENCY_DEFAULT = 8;
/** A lane starts no new poll this long after its round began; what it took and did not poll is due again later. */
const LANE_BUDGET_MS_DEFAULT = 10_000;
/**
 * An open payment is polled again after this share of its age, at least every interval and at
 * most every POLL_DELAY_MS_MAX: a young payment moves quickly, a day-old claim link rarely does.
 */
const POLL_DELAY_AGE_DIVISOR = 20;
const POLL_DELAY_MS_MAX = 60_000;

export interface SettlerSettings {
  intervalMs: number;
  /** A pending payment is left to the request that submits it this long before the settler resubmits it. */
  resubmitAfterMs: number;
  /** A payment pending this long since its partner was last unreachable (or since it was made) is resubmitted no more: the partner is asked whether it made it, and it is failed if not. */
  pendingDeadlineMs: number;
  /** Partner calls of one lane at once (LANE_CONCURRENCY_DEFAULT). */
  concurrency?: number;
  /** How long a lane starts new polls in one round (LANE_BUDGET_MS_DEFAULT). */
  budgetMs?: number;
}

const OPEN_STATUSES = ['pending', 'sent', 'authorized'];
/** The same, as SQL literals: the payments_due index is partial on exactly these, which the planner sees only in the text. */
const OPEN_STATUSES_SQL = OPEN_STATUSES.map((status) => `'${status}'`).join(', ');

/** A payment as the settler takes it: with the last time its partner could not be reached (the settler's own column). */
type DuePayment = PaymentRecord & { partner_unreachable_at: Date | null; unsent_end: UnsentEnd | null };

/** What every update of a followed payment carries. */
type PaymentUpdateBase = Pick<PaymentUpdate, 'payment_id' | 'claim_link' | 'retry_count' | 'submissions'>;

export class PaymentSettler {
  private stopped = false;
  private probing: Promise<void> = Promise.resolve();
  /** The lane round under way for each partner: a lane never runs twice at once. */
  private readonly lanes = new Map<PartnerSlug, Promise<void>>();
  /** Aborted by stop(): a stop does not wait out the interval. */
  private readonly wake = new AbortController();

  constructor(
    private readonly runtime: Runtime,
    private readonly links: PartnerLinks,
    private readonly clients: (partner: PartnerSlug) => PartnerClient,
    private readonly settings: SettlerSettings,
  ) {}

  /**
   * Every interval, one statement asks which partners have payments due, and the lane of each
   * that has runs its round unless its last one is still under way: while nothing is open, the
   * settler costs one index probe an interval, not a statement per partner.
   */
  start(): void {
    this.probing = (async () => {
      while (!this.stopped) {
        try {
          for (const partner of await this.partnersDue()) this.startLane(partner);
        } catch (error) {
          log.warn({ err: error }, 'could not learn which partners have payments due; the next interval asks again');
        }
        await sleep(this.settings.intervalMs, undefined, { signal: this.wake.signal }).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake.abort();
    await this.probing;
    await Promise.all(this.lanes.values());
  }

  /** One pass over the payments that are due, every partner's lane at once. */
  async round(): Promise<void> {
    await Promise.all(PARTNER_SLUGS.map((partner) => this.laneRound(partner)));
  }

  /** The partners with an open payment whose next poll is due: one probe of the payments_due index each. */
  private async partnersDue(): Promise<PartnerSlug[]> {
    const { rows } = await this.runtime.db.raw<{ rows: Array<{ partner: PartnerSlug }> }>(`
      SELECT slug AS partner FROM unnest(?::text[]) AS s(slug)
       WHERE EXISTS (SELECT 1 FROM payments WHERE partner = s.slug AND status IN (${OPEN_STATUSES_SQL}) AND next_poll_at <= now())`,
    [[...PARTNER_SLUGS]]);
    return rows.map((row) => row.partner);
  }

  private startLane(partner: PartnerSlug): void {
    if (this.lanes.has(partner) || this.stopped) return;
    this.lanes.set(partner, this.laneRound(partner).finally(() => this.lanes.delete(partner)));
  }

  private async laneRound(partner: PartnerSlug): Promise<void> {
    try {
      const due = await this.takeDue(partner);
      const updates = await this.followAll(due);
      if (updates.length > 0) await this.send(due, updates);
    } catch (error) {
      log.warn({ partner, err: error }, 'a payment settling round failed; the next one retries');
    }
  }

  /**
   * The partner's open payments that are due, oldest due first, each moved on to its next poll
   * in the same statement (a payment not yet left to the settler, to when it is). SKIP LOCKED:
   * another settler, or the ledger writing the payment, has it this turn.
   */
  private async takeDue(partner: PartnerSlug): Promise<DuePayment[]> {
    const { rows } = await this.runtime.db.raw<{ rows: DuePayment[] }>(`
      UPDATE payments AS p SET next_poll_at = greatest(
        now() + make_interval(secs => greatest(?::float8, least(?::float8, extract(epoch FROM now() - p.created_at) / ?))),
        CASE WHEN p.external_id IS NULL THEN p.created_at + make_interval(secs => ?::float8) ELSE '-infinity' END)
      FROM (
        SELECT id FROM payments WHERE partner = ? AND status IN (${OPEN_STATUSES.map(() => '?').join(', ')}) AND next_poll_at <= now()
        ORDER BY next_poll_at LIMIT ? FOR UPDATE SKIP LOCKED
      ) AS due
      WHERE p.id = due.id
      RETURNING p.*`, [
      this.settings.intervalMs / 1000, POLL_DELAY_MS_MAX / 1000, POLL_DELAY_AGE_DIVISOR, this.settings.resubmitAfterMs / 1000,
      partner, ...OPEN_STATUSES, LANE_BATCH_MAX,
    ]);
    return rows;
  }

  /** Polls the payments, a few at once, within the lane's budget; what each said to the ledger. */
  private async followAll(due: DuePayment[]): Promise<PaymentUpdate[]> {
    const stopStartingAt = wallNowMs() + (this.settings.budgetMs ?? LANE_BUDGET_MS_DEFAULT);
    const updates: PaymentUpdate[] = [];
    let next = 0;
    const worker = async () => {
      while (next < due.length && wallNowMs() < stopStartingAt && !this.stopped) {
        const payment = due[next++];
        const update = await this.follow(payment).catch((error) => {
          log.debug({ paymentId: payment.id, err: (error as Error).message }, 'could not follow a payment at its partner; it is due again later');
          return null;
        });
        if (update) updates.push(update);
      }
    };
    await Promise.all(Array.from({ length: Math.min(due.length, this.settings.concurrency ?? LANE_CONCURRENCY_DEFAULT) }, worker));
    return updates;
  }

  private async follow(payment: DuePayment): Promise<PaymentUpdate | null> {
    const base = { payment_id: payment.id, claim_link: null, retry_count: payment.retry_count, submissions: 0 };
    if (payment.external_id !== null) return this.followMade(payment, base);
    if (wallNowMs() - payment.created_at.getTime() < this.settings.resubmitAfterMs) return null;
    // A payment of an account on a test clock was made at the clock's time, and its deadline is on
    // the clock: the clock's advance asks the partner for it at that instant (clock-payments.ts).
    // Resubmitted here meanwhile, it could reach the partner after the advance found none there.
    if ((await testClockOf(this.runtime.db, payment.account_id)) !== null) return null;
    // Ended by a submitter (declined, past its deadline, by the sandbox) whose word has not reached the ledger yet.
    if (payment.unsent_end !== null) return { ...base, ...payment.unsent_end, external_id: null };
    const lease = await takeSubmission(this.runtime.db, payment.id);
    if (lease === null) return null; // another submitter has it, or has just ended it: due again later
    try {
      return await this.followUnmade({ ...payment, partner_unreachable_at: lease.partnerUnreachableAt }, base, lease.token);
    } finally {
      await giveBackSubmission(this.runtime.db, payment.id, lease.token);
    }
  }

  /** A payment the partner made: read with the customer's token, or the client's own once the link is gone. */
  private async followMade(payment: DuePayment, base: PaymentUpdateBase): Promise<PaymentUpdate | null> {
    const client = this.clients(payment.partner as PartnerSlug);
    const link = await this.linkOf(payment);
    try {
      const seen = link ? await this.links.withToken(link, (token) => client.getPaymentAs(token, payment.external_id!)) : await client.getPayment(payment.external_id!);
      const update = updateFromPartner(payment, seen);
      return update && { ...base, ...update };
    } catch (error) {
      if (isPartnerError(error) && error.kind === 'declined') {
        return { ...base, status: 'failed', external_id: payment.external_id, failure_code: 'partner_declined', failure_message: error.message };
      }
      throw error;
    }
  }

  /**
   * A payment with no partner id, held under `lease`: submitted again while its deadline runs, then
   * looked for by reference, and failed if the partner never made it.
   */
  private async followUnmade(payment: DuePayment, base: PaymentUpdateBase, lease: string): Promise<PaymentUpdate | null> {
    // A resubmission is counted with the answer it got, or alone when it got none (the ledger adds it once).
    const sent = { submissions: 0 };
    const ageMs = wallNowMs() - payment.created_at.getTime();
    // Time the partner could not be reached is not counted against it: the deadline runs from its return.
    const reachableForMs = Math.min(ageMs, wallNowMs() - (payment.partner_unreachable_at?.getTime() ?? 0));
    const client = this.clients(payment.partner as PartnerSlug);
    const link = await this.linkOf(payment);
    let seen: PartnerPayment | null;
    try {
      if (link && reachableForMs < this.settings.pendingDeadlineMs) {
        seen = await this.links.withToken(link, (token) => client.submitPaymentAs(token, partnerRequestOf(payment), sent));
      } else {
        seen = await client.findPaymentByReference(payment.id);
        if (seen === null) {
          const why = link ? 'no partner reference came back before the deadline' : 'the customer revoked the partner link before the payment was made';
          const end: UnsentEnd = { status: 'failed', failure_code: link ? 'partner_timeout' : 'partner_link_revoked', failure_message: `${why}, and the partner has no payment under its reference: nothing moved` };
          return this.ended(payment, base, lease, end);
        }
      }
    } catch (error) {
      base.submissions = sent.submissions;
      if (isPartnerError(error) && error.kind === 'unavailable') await markPartnerUnreachable(this.runtime.db, payment.id);
      if (isPartnerError(error) && error.kind === 'declined') {
        const ended = await this.ended(payment, base, lease, { status: 'failed', failure_code: 'partner_declined', failure_message: error.message });
        if (ended) return ended;
      }
      // A resubmission that got no answer still counts (retry_count); the payment is due again later.
      if (sent.submissions === 0) throw error;
      log.debug({ paymentId: payment.id, err: (error as Error).message }, 'a resubmission got no answer; counted, and tried again next round');
      return { ...base, status: 'pending', external_id: null, failure_code: null, failure_message: null };
    }
    base.submissions = sent.submissions;
    const update = updateFromPartner(payment, seen);
    return update && { ...base, ...update };
  }

  /**
   * The end this settler gave a payment the partner never made, written down as the lease is given
   * back (submission-lease.ts); null when the lease had run out: another submitter may have sent it since.
   */
  private async ended(payment: DuePayment, base: PaymentUpdateBase, lease: string, end: UnsentEnd): Promise<PaymentUpdate | null> {
    if (!(await endSubmission(this.runtime.db, payment.id, lease, end))) return null;
    return { ...base, ...end, external_id: null };
  }

  /** The customer's active link with the payment's partner, or null once there is none. */
  private async linkOf(payment: PaymentRecord): Promise<PartnerLinkRow | null> {
    try {
      return await this.links.activeLink(payment.customer_id, payment.partner as PartnerSlug);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'customer_not_linked') return null;
      throw error;
    }
  }

  private async send(due: DuePayment[], updates: PaymentUpdate[]): Promise<void> {
    const accountOf = new Map(due.map((p) => [p.id, p.account_id]));
    const messages = await Promise.all(updates.map(async (update) => {
      const envelope: LedgerCommandEnvelope = {
        id: update.status === 'pending' ? paymentSubmissionsCommandId(update.payment_id, randomUUID()) : paymentUpdateCommandId(update.payment_id, update.status),
        type: 'payment.update', account_id: accountOf.get(update.payment_id)!,
        reply_to: null, issued_at: wallNow().toISOString(), payload: JSON.stringify(update),
      };
      return { key: envelope.account_id, value: await this.runtime.codec.encode(TOPICS.ledgerCommands, envelope) };
    }));
    await this.runtime.producer.send({ topic: this.runtime.names.full(TOPICS.ledgerCommands), acks: -1, messages });
  }
}
