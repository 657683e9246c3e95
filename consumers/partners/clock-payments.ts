// A test clock's payments that fall due as it advances (DESIGN.md sections 5c and 5i): for an
// account on a clock, a claim link expires and a pending payment passes its deadline on the
// clock's time, not the wall's. The clock's advance (consumers/ledger/clock-advance.ts) steps to
// each instant and asks here for what is due by it; this module asks or tells the partner first,
// and answers the ledger commands that record what the partner then holds:
//   a claim link past its expiry  the partner is told to expire it (its sandbox control):
//                                 done          → cancelled, claim_expired, the hold released
//                                 refused (409) → what the partner holds is recorded (the payee
//                                                 claimed: completed): a paid payment is never cancelled
//   a payment pending past its    the partner is asked for it by reference, as the settler asks at
//   deadline                      the wall's deadline: none → failed, partner_timeout, hold released;
//                                 one → recorded as the partner holds it (sent, with its claim link)
// A partner that cannot be reached decides nothing: the step throws, the clock stays `advancing`,
// and the advance is taken up again (as with the wall's deadline, time the partner was away is
// never counted against it).
//
// When a link expires: the partner keeps a link open for its claim TTL from when it made the
// payment, and it made it when the ledger first heard it (`sent`): that instant on the clock plus
// the TTL. The partner's answer gives no expiry, so the TTL is the sandbox partner's own setting
// (MOCK_RAILS_CLAIM_TTL_MS), which both read.
//
// Exactly once: each command's id names the payment and the status it records (as the settler's
// do), so the advance, the settler and a simulation can only say each thing once. A payment whose
// update is decided is no longer due (its status moved on), so nothing is done twice; one left
// undecided by a crash is found due again and told again (the partner answers the same).
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import type { PaymentUpdate } from '../../ledger/commands/payment-update';
import { paymentUpdateCommandId, updateFromPartner, type PaymentRecord } from '../../ledger/payments';
import { inClockScope } from '../../src/clock';
import type { PartnerClient } from '../../src/partners/client';
import { tellPartnerControl } from '../../src/partners/sandbox-control';
import type { PartnerSlug } from '../../src/partners/registry';
import type { Runtime } from '../../src/runtime';
import { createPartnerClients } from './dispatcher';

/** Payments handled per step's call: the advance asks again while more are due by the same instant. */
const DUE_PER_CALL_MAX = 100;
/** The advance's partner calls: tried twice at most; a partner that does not answer holds the step for seconds, and the advance is taken up again. */
const CLOCK_CALLS = { timeoutMs: 3_000, attemptsMax: 2, backoffMsMax: 500 };

export interface ClockPaymentSettings {
  /** How long the partner keeps a claim link open (MOCK_RAILS_CLAIM_TTL_MS). */
  claimTtlMs: number;
  /** How long a payment may stay pending (PAYMENT_PENDING_DEADLINE_MS, as the settler's). */
  pendingDeadlineMs: number;
  /** Where the partners live, and the secret of their sandbox controls. */
  railsUrl: string;
  controlSecret: string;
}

type DueReason = 'claim_expiry' | 'pending_deadline';
type DuePayment = PaymentRecord & { due_reason: DueReason; due_at: Date };

/** SQL: the instant the partner made the payment, on the clock: when the ledger recorded it `sent` (else when it was recorded). */
const SENT_AT = `coalesce((SELECT min((h->>'at')::timestamptz) FROM jsonb_array_elements(p.status_history) h WHERE h->>'to' = 'sent'), p.created_at)`;

/** SQL: the clock's payments that fall due, each with why and when (bindings: TTL ms, scope, deadline ms, scope). */
function duePaymentsSql(clockId: string, settings: ClockPaymentSettings): { sql: string; bindings: Array<string | number> } {
  const scope = inClockScope('p.account_id', clockId);
  return {
    sql: `SELECT p.*, 'claim_expiry' AS due_reason, ${SENT_AT} + ? * interval '1 millisecond' AS due_at FROM payments p
           WHERE p.status = 'sent' AND p.claim_link IS NOT NULL AND p.external_id IS NOT NULL AND ${scope.sql}
          UNION ALL
          SELECT p.*, 'pending_deadline', p.created_at + ? * interval '1 millisecond' FROM payments p
           WHERE p.status = 'pending' AND ${scope.sql}`,
    bindings: [settings.claimTtlMs, ...scope.bindings, settings.pendingDeadlineMs, ...scope.bindings],
  };
}

export class ClockPayments {
  constructor(
    private readonly runtime: Runtime,
    private readonly clients: (partner: PartnerSlug) => PartnerClient,
    private readonly settings: ClockPaymentSettings,
  ) {}

  /** The earliest instant at which a payment of the clock's accounts falls due, or null. */
  async earliestDue(clockId: string): Promise<Date | null> {
    const due = duePaymentsSql(clockId, this.settings);
    const { rows } = await this.runtime.db.raw<{ rows: Array<{ due: Date | null }> }>(`SELECT min(due_at) AS due FROM (${due.sql}) d`, due.bindings);
    return rows[0].due === null ? null : new Date(rows[0].due);
  }

  /**
   * The payments of the clock's accounts due by `at`, earliest first (at most DUE_PER_CALL_MAX),
   * each told to or asked of its partner, one after the other: the commands that record what the
   * partner holds, to be decided at `at`. Throws when a partner cannot be reached.
   */
  async commandsDue(clockId: string, at: Date): Promise<LedgerCommandEnvelope[]> {
    const due = duePaymentsSql(clockId, this.settings);
    const { rows } = await this.runtime.db.raw<{ rows: DuePayment[] }>(
      `SELECT * FROM (${due.sql}) d WHERE d.due_at <= ? ORDER BY d.due_at, d.id LIMIT ?`, [...due.bindings, at, DUE_PER_CALL_MAX]);
    const commands: LedgerCommandEnvelope[] = [];
    for (const payment of rows) {
      const update = payment.due_reason === 'claim_expiry' ? await this.expireClaim(payment) : await this.pastDeadline(payment);
      commands.push({
        id: paymentUpdateCommandId(payment.id, update.status), type: 'payment.update', account_id: payment.account_id, reply_to: null,
        issued_at: at.toISOString(), payload: JSON.stringify(update), idempotency_key: null, fingerprint: null, request_id: null,
      });
    }
    return commands;
  }

  /** The partner is told the link expired; refused, what it holds instead (the payee claimed it). */
  private async expireClaim(payment: DuePayment): Promise<PaymentUpdate> {
    const externalId = payment.external_id!;
    const answer = await tellPartnerControl(this.settings.railsUrl, this.settings.controlSecret, payment.partner, 'expire-claim', externalId);
    if (answer === 'unreachable') throw new Error(`${payment.partner} could not be told that the claim link of payment ${payment.id} expired on its test clock`);
    const seen = answer === 'done'
      ? { id: externalId, status: 'expired' as const, claim_link: payment.claim_link ?? undefined }
      : await this.clients(payment.partner as PartnerSlug).getPayment(externalId);
    return this.recorded(payment, seen);
  }

  /** The partner is asked for the payment by its reference: none fails it, one is recorded as the partner holds it. */
  private async pastDeadline(payment: DuePayment): Promise<PaymentUpdate> {
    const seen = await this.clients(payment.partner as PartnerSlug).findPaymentByReference(payment.id);
    if (seen !== null) return this.recorded(payment, seen);
    return {
      payment_id: payment.id, status: 'failed', external_id: null, claim_link: null, retry_count: payment.retry_count, failure_code: 'partner_timeout',
      failure_message: 'no partner reference came back before the deadline on the test clock, and the partner has no payment under its reference: nothing moved',
    };
  }

  /** What the partner's view records; a view that changes nothing would leave the payment due for ever, so it stops the step. */
  private recorded(payment: DuePayment, seen: Parameters<typeof updateFromPartner>[1]): PaymentUpdate {
    const update = updateFromPartner(payment, seen);
    if (update === null) throw new Error(`${payment.partner} holds payment ${payment.id} as ${seen.status}, which does not end its ${payment.due_reason.replace('_', ' ')}`);
    return { payment_id: payment.id, retry_count: payment.retry_count, ...update };
  }
}

/** The clock's payments of a process: its partners reached at `railsUrl` (this process's own mock rails, or config.mockRailsUrl). */
export function clockPayments(runtime: Runtime, railsUrl = runtime.config.mockRailsUrl): ClockPayments {
  const { config } = runtime;
  const clients = createPartnerClients({ railsUrl, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret, calls: CLOCK_CALLS });
  return new ClockPayments(runtime, (partner) => clients.get(partner)!, {
    claimTtlMs: config.mockRailsClaimTtlMs, pendingDeadlineMs: config.paymentPendingDeadlineMs, railsUrl: railsUrl.replace(/\/+$/, ''), controlSecret: config.mockRailsControlSecret,
  });
}
