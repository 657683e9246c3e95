// Follows payments at their partner until they end (DESIGN.md section 5c): a payment the partner
// has accepted (`sent`, `authorized`) is polled with the customer's link token, and its progress
// (`authorized`, `completed`, a reversal) goes to the ledger as a payment.update command. A
// payment still `pending` a while after it was recorded (the request path met an unknown
// outcome, or its process died) is submitted again under the same reference: the partner answers
// with the payment if it had made it, and makes it otherwise, as the client asked. One no partner
// reference ever came back for by the deadline is failed with its event rather than left pending
// forever. Command ids name the payment and the status, so several settlers (or a
// repeated poll) can only say each thing once: the ledger keeps the first.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LedgerCommandEnvelope, PaymentUpdate } from '../../ledger/messages';
import { formatAmount } from '../../ledger/money';
import { paymentSubmissionsCommandId, paymentUpdateCommandId, updateFromPartner, type PaymentRecord } from '../../ledger/payments';
import { TOPICS } from '../../src/kafka/topics';
import { log } from '../../src/log';
import type { PartnerLinks } from '../../src/partner-links/links';
import type { PartnerClient, PartnerPayment } from '../../src/partners/client';
import { isPartnerError } from '../../src/partners/errors';
import type { PartnerSlug } from '../../src/partners/registry';
import type { Runtime } from '../../src/runtime';

const POLL_BATCH_MAX = 100;

export interface SettlerSettings {
  intervalMs: number;
  /** A pending payment is left to the request that submits it this long before the settler resubmits it. */
  resubmitAfterMs: number;
  /** A payment pending this long without a partner reference is failed. */
  pendingDeadlineMs: number;
}

export class PaymentSettler {
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly runtime: Runtime,
    private readonly links: PartnerLinks,
    private readonly clients: (partner: PartnerSlug) => PartnerClient,
    private readonly settings: SettlerSettings,
  ) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.round().catch((error) => log.warn({ err: error }, 'a payment settling round failed; the next one retries'));
        await sleep(this.settings.intervalMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /** One pass over the payments still open. */
  async round(): Promise<void> {
    const open: PaymentRecord[] = await this.runtime.db('payments').whereIn('status', ['pending', 'sent', 'authorized'])
      .orderBy('updated_at').limit(POLL_BATCH_MAX);
    const updates: PaymentUpdate[] = [];
    for (const payment of open) {
      const update = await this.follow(payment).catch((error) => {
        log.debug({ paymentId: payment.id, err: (error as Error).message }, 'could not follow a payment at its partner; next round');
        return null;
      });
      if (update) updates.push(update);
    }
    if (updates.length > 0) await this.send(open, updates);
  }

  private async follow(payment: PaymentRecord): Promise<PaymentUpdate | null> {
    // A resubmission is counted with the answer it got, or alone when it got none (the ledger adds it once).
    const sent = { submissions: 0 };
    const base = { payment_id: payment.id, claim_link: null, retry_count: payment.retry_count, submissions: 0 };
    const ageMs = Date.now() - payment.created_at.getTime();
    if (payment.external_id === null && ageMs < this.settings.resubmitAfterMs) return null;
    const client = this.clients(payment.partner as PartnerSlug);
    let seen: PartnerPayment;
    try {
      const link = await this.links.activeLink(payment.customer_id, payment.partner as PartnerSlug);
      seen = payment.external_id === null
        ? await this.links.withToken(link, (token) => client.submitPaymentAs(token, {
          reference: payment.id, amount: formatAmount(payment.amount, payment.currency), currency: payment.currency, metadata: { payment_id: payment.id },
        }, sent))
        : await this.links.withToken(link, (token) => client.getPaymentAs(token, payment.external_id!));
    } catch (error) {
      base.submissions = sent.submissions;
      if (isPartnerError(error) && error.kind === 'declined') {
        return { ...base, status: 'failed', external_id: payment.external_id, failure_code: 'partner_declined', failure_message: error.message };
      }
      if (payment.external_id !== null || ageMs < this.settings.pendingDeadlineMs) {
        if (sent.submissions === 0) throw error;
        log.debug({ paymentId: payment.id, err: (error as Error).message }, 'a resubmission got no answer; counted, and tried again next round');
        return { ...base, status: 'pending', external_id: null, failure_code: null, failure_message: null };
      }
      return { ...base, status: 'failed', external_id: null, failure_code: 'partner_timeout', failure_message: `no partner reference came back before the deadline (${(error as Error).message}); nothing moved` };
    }
    base.submissions = sent.submissions;
    const update = updateFromPartner(payment, seen);
    return update && { ...base, ...update };
  }

  private async send(open: PaymentRecord[], updates: PaymentUpdate[]): Promise<void> {
    const accountOf = new Map(open.map((p) => [p.id, p.account_id]));
    const messages = await Promise.all(updates.map(async (update) => {
      const envelope: LedgerCommandEnvelope = {
        id: update.status === 'pending' ? paymentSubmissionsCommandId(update.payment_id, randomUUID()) : paymentUpdateCommandId(update.payment_id, update.status),
        type: 'payment.update', account_id: accountOf.get(update.payment_id)!,
        reply_to: null, issued_at: new Date().toISOString(), payload: JSON.stringify(update),
      };
      return { key: envelope.account_id, value: await this.runtime.codec.encode(TOPICS.ledgerCommands, envelope) };
    }));
    await this.runtime.producer.send({ topic: this.runtime.names.full(TOPICS.ledgerCommands), acks: -1, messages });
  }
}
