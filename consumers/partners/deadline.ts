// The deadline of an `executing` transfer (its funds held while a partner executes it). A retry
// chain can end without a result: its instruction dead-lettered, or dropped by a crash between
// its claim and its re-queue. Past the deadline, with no instruction claimed for as long, the
// partner is asked what it holds under the transfer's reference:
//   it confirms none          → the transfer fails (`execution_deadline`), its hold released
//   it holds the payment      → a new instruction follows it (attempt after the last claimed)
//   it cannot be asked        → nothing moves: the funds stay held, the transfer is marked
//                               `unreachable_since` (partner_instructions), its checks counted, each
//                               round logs the count, and the operator lists it (GET /v1/unreachable-transfers)
// A partner that answers again clears the mark, whatever it answered.
// Never silently failed: only the partner's "none" fails a transfer. A pending return has a deadline
// of the same length, checked in the same rounds (return-deadline.ts).
// Each partner is checked on its own, side by side, and a partner found away is not asked again
// in the same round (its other overdue transfers are marked with the same reason): a partner that
// is down, with any number of transfers waiting on it, delays no other partner's deadline.
import { setTimeout as sleep } from 'node:timers/promises';
import type { LedgerCommandEnvelope, PartnerCommandEnvelope, TransferExecute } from '../../ledger/messages';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import { formatAmount, type Currency } from '../../ledger/money';
import { TOPICS } from '../../src/kafka/topics';
import { log } from '../../src/log';
import type { PartnerClient, PartnerPayment } from '../../src/partners/client';
import { isPartnerError } from '../../src/partners/errors';
import type { Runtime } from '../../src/runtime';
import { resultCommand } from './dispatcher';
import { ReturnDeadline } from './return-deadline';
import { wallNow, wallNowMs } from '../../src/clock';

/** Overdue transfers taken per partner in one round. */
const OVERDUE_BATCH_MAX = 100;

export interface DeadlineSettings {
  /** How long a transfer may stay `executing` without an instruction claimed before the partner is asked. */
  deadlineMs: number;
  intervalMs: number;
}

interface OverdueRow {
  id: string; account_id: string; partner: string; payout_amount: string; payout_currency: Currency;
  recipient: Record<string, unknown>; recipient_account_id: string | null; attempt: number | null;
}

export interface DeadlineRound { failed: number; followed: number; unreachable: number }

export class ExecutingDeadline {
  private stopped = false;
  private loop: Promise<void> | null = null;
  /** Aborted by stop(): a stop does not wait out the interval. */
  private readonly wake = new AbortController();

  private readonly returns: ReturnDeadline;

  constructor(private readonly runtime: Runtime, private readonly clients: ReadonlyMap<string, PartnerClient>, private readonly settings: DeadlineSettings) {
    this.returns = new ReturnDeadline(runtime, clients, settings);
  }

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.round().catch((error) => log.warn({ err: error }, 'an executing-deadline round failed; the next one retries'));
        await this.returns.round().catch((error) => log.warn({ err: error }, 'a return-deadline round failed; the next one retries'));
        await sleep(this.settings.intervalMs, undefined, { signal: this.wake.signal }).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake.abort();
    await this.loop;
  }

  /** One pass over the executing transfers past their deadline, each partner's beside the others'. */
  async round(): Promise<DeadlineRound> {
    const rounds = await Promise.all([...this.clients.keys()].map((partner) => this.partnerRound(partner)));
    const counts: DeadlineRound = { failed: 0, followed: 0, unreachable: 0 };
    for (const round of rounds) for (const key of Object.keys(counts) as Array<keyof DeadlineRound>) counts[key] += round[key];
    if (counts.unreachable > 0) log.warn({ ...counts }, 'executing transfers past their deadline whose partner cannot be asked: funds stay held');
    return counts;
  }

  private async partnerRound(partner: string): Promise<DeadlineRound> {
    const { db } = this.runtime;
    const cutoff = new Date(wallNowMs() - this.settings.deadlineMs);
    // The transfer's own deadline is on its account's time: a test clock's for an account on one
    // (its updated_at is the clock's), the wall's otherwise. The last claim is the wall's, as the
    // retry chain that made it runs on the wall: a chain still at work is never asked about.
    const overdue: OverdueRow[] = await db('transfers as t')
      .leftJoin('partner_instructions as c', 'c.transfer_id', db.raw('t.id::text'))
      .where('t.status', 'executing').where('t.partner', partner)
      .whereRaw(`t.updated_at < coalesce((SELECT k.frozen_time FROM accounts a JOIN test_clocks k ON k.id = a.test_clock_id WHERE a.id = t.account_id), ?::timestamptz) - ? * interval '1 millisecond'`,
        [wallNow(), this.settings.deadlineMs])
      .where((q) => q.whereNull('c.claimed_at').orWhere('c.claimed_at', '<', cutoff))
      .orderBy('t.updated_at').limit(OVERDUE_BATCH_MAX)
      .select('t.id', 't.account_id', 't.partner', db.raw('t.payout_amount::text AS payout_amount'), 't.payout_currency', 't.recipient', 't.recipient_account_id', 'c.attempt');
    const counts: DeadlineRound = { failed: 0, followed: 0, unreachable: 0 };
    let away: string | null = null;
    for (const transfer of overdue) {
      const payment: PartnerPayment | null | string = away ?? await this.lookUp(partner, transfer.id);
      if (typeof payment === 'string') {
        away = payment;
        await this.markUnreachable(transfer, away);
        counts.unreachable += 1;
        continue;
      }
      await this.clearUnreachable(transfer);
      if (payment === null) {
        await this.fail(transfer);
        counts.failed += 1;
      } else {
        await this.followAgain(transfer);
        counts.followed += 1;
      }
    }
    return counts;
  }

  /** What the partner holds under the transfer's reference, or why it could not be asked. */
  private async lookUp(partner: string, transferId: string): Promise<PartnerPayment | null | string> {
    try {
      return await this.clients.get(partner)!.findPaymentByReference(transferId);
    } catch (error) {
      if (!isPartnerError(error)) throw error;
      return error.message;
    }
  }

  private async markUnreachable(transfer: OverdueRow, reason: string): Promise<void> {
    await this.runtime.db.raw(`
      INSERT INTO partner_instructions AS c (transfer_id, attempt, source, claimed_at, unreachable_since, unreachable_reason, unreachable_checks)
      VALUES (?, ?, 'deadline', to_timestamp(0), now(), ?, 1)
      ON CONFLICT (transfer_id) DO UPDATE SET unreachable_since = coalesce(c.unreachable_since, now()), unreachable_reason = excluded.unreachable_reason,
        unreachable_checks = c.unreachable_checks + 1`,
    [transfer.id, transfer.attempt ?? -1, reason.slice(0, 500)]);
  }

  /** The partner answered: the transfer is no longer waiting on it, so the operator's list drops it. */
  private async clearUnreachable(transfer: OverdueRow): Promise<void> {
    await this.runtime.db('partner_instructions').where('transfer_id', transfer.id).whereNotNull('unreachable_since')
      .update({ unreachable_since: null, unreachable_reason: null, unreachable_checks: 0 });
  }

  private async fail(transfer: OverdueRow): Promise<void> {
    const result: TransferPartnerResult = {
      transfer_id: transfer.id, outcome: 'failed', partner_payment_id: null, failure_code: 'execution_deadline',
      failure_message: 'the transfer passed its execution deadline and the partner confirmed it holds no payment under its reference',
    };
    const envelope: LedgerCommandEnvelope = resultCommand(transfer.account_id, result);
    await this.runtime.producer.send({
      topic: this.runtime.names.full(TOPICS.ledgerCommands), acks: -1,
      messages: [{ key: transfer.account_id, value: await this.runtime.codec.encode(TOPICS.ledgerCommands, envelope) }],
    });
  }

  /** A new instruction, after the last claimed attempt: the dispatcher finds the payment by reference and follows it. */
  private async followAgain(transfer: OverdueRow): Promise<void> {
    const attempt = (transfer.attempt ?? -1) + 1;
    const payload: TransferExecute = {
      transfer_id: transfer.id, amount: formatAmount(transfer.payout_amount, transfer.payout_currency), currency: transfer.payout_currency, attempt,
      beneficiary: { ...transfer.recipient, account_id: transfer.recipient_account_id }, scenario: null,
    };
    const envelope: PartnerCommandEnvelope = {
      id: `execute:${transfer.id}:${attempt}`, type: 'transfer.execute', partner: transfer.partner, resource_id: transfer.id,
      account_id: transfer.account_id, issued_at: wallNow().toISOString(), payload: JSON.stringify(payload),
    };
    await this.runtime.producer.send({
      topic: this.runtime.names.full(TOPICS.partnerCommands), acks: -1,
      messages: [{ key: transfer.id, value: await this.runtime.codec.encode(TOPICS.partnerCommands, envelope) }],
    });
  }
}
