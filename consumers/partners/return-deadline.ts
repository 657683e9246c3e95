// The deadline of a pending return (DESIGN.md section 5h), as deadline.ts keeps one for an
// executing transfer: a return's chain of instructions can end without an answer (its instruction
// dead-lettered), and the recipient's part would stay held for ever. Past the deadline, with no
// instruction claimed for as long, the partner is asked what it holds under the reversal's id:
//   it confirms none       → the return fails (`execution_deadline`), the part back with the recipient
//   it holds the return    → a new instruction follows it (attempt after the last claimed)
//   it cannot be asked     → nothing moves: the part stays held, and it is asked again next round
// Never failed but on the partner's word that it made no return.
import { partnerEnvelope, type PartnerCommandEnvelope, type TransferReturn } from '../../ledger/messages';
import type { Currency } from '../../ledger/money';
import { TOPICS } from '../../src/kafka/topics';
import { log } from '../../src/log';
import type { PartnerClient, PartnerPayment } from '../../src/partners/client';
import { isPartnerError } from '../../src/partners/errors';
import type { Runtime } from '../../src/runtime';
import { returnResultCommand } from './returns';
import { wallNow, wallNowMs } from '../../src/clock';

/** Overdue returns taken per partner in one round. */
const OVERDUE_BATCH_MAX = 100;

interface OverdueReturn { transfer_id: string; account_id: string; payment_id: string; reversal_id: string; amount: string; currency: Currency; attempt: number | null }

export interface ReturnDeadlineRound { failed: number; followed: number; unreachable: number }

export class ReturnDeadline {
  constructor(private readonly runtime: Runtime, private readonly clients: ReadonlyMap<string, PartnerClient>, private readonly settings: { deadlineMs: number }) {}

  /** One pass over the pending returns past their deadline, each partner's beside the others'. */
  async round(): Promise<ReturnDeadlineRound> {
    const rounds = await Promise.all([...this.clients.keys()].map((partner) => this.partnerRound(partner)));
    const counts: ReturnDeadlineRound = { failed: 0, followed: 0, unreachable: 0 };
    for (const round of rounds) for (const key of Object.keys(counts) as Array<keyof ReturnDeadlineRound>) counts[key] += round[key];
    if (counts.unreachable > 0) log.warn({ ...counts }, 'pending returns past their deadline whose partner cannot be asked: the recipients\' parts stay held');
    return counts;
  }

  private async partnerRound(partner: string): Promise<ReturnDeadlineRound> {
    const cutoff = new Date(wallNowMs() - this.settings.deadlineMs);
    // The partial index transfers_pending_returns holds the transfers with a pending return.
    const { rows: overdue } = await this.runtime.db.raw<{ rows: OverdueReturn[] }>(`
      SELECT t.id AS transfer_id, t.account_id, t.partner_payment_id AS payment_id, r->>'id' AS reversal_id, r->>'payout_amount' AS amount,
             t.payout_currency AS currency, c.attempt
        FROM transfers t CROSS JOIN LATERAL jsonb_array_elements(t.reversals) r
        LEFT JOIN partner_instructions c ON c.transfer_id = 'return:' || (r->>'id')
       WHERE t.partner = ? AND t.reversals @> '[{"status": "pending"}]'::jsonb AND r->>'status' = 'pending' AND (r->>'created_at')::timestamptz < ?
         AND (c.claimed_at IS NULL OR c.claimed_at < ?)
       ORDER BY (r->>'created_at')::timestamptz LIMIT ?`, [partner, cutoff, cutoff, OVERDUE_BATCH_MAX]);
    const counts: ReturnDeadlineRound = { failed: 0, followed: 0, unreachable: 0 };
    for (const overdueReturn of overdue) {
      const held = await this.lookUp(partner, overdueReturn.reversal_id);
      if (held === 'away') {
        // The partner cannot be asked: its other overdue returns would find it away too.
        counts.unreachable += overdue.length - counts.failed - counts.followed;
        break;
      }
      const command = this.returnOf(overdueReturn);
      if (held === null) {
        await this.fail(overdueReturn.account_id, command);
        counts.failed += 1;
      } else {
        await this.followAgain(partner, overdueReturn.account_id, command);
        counts.followed += 1;
      }
    }
    return counts;
  }

  /** What the partner holds under the reversal's id, or 'away' when it cannot be asked. */
  private async lookUp(partner: string, reversalId: string): Promise<PartnerPayment | null | 'away'> {
    try {
      return await this.clients.get(partner)!.findPaymentByReference(reversalId);
    } catch (error) {
      if (!isPartnerError(error)) throw error;
      return 'away';
    }
  }

  /** The return's instruction after the last claimed attempt. */
  private returnOf(row: OverdueReturn): TransferReturn {
    return {
      transfer_id: row.transfer_id, reversal_id: row.reversal_id, payment_id: row.payment_id, amount: row.amount, currency: row.currency,
      attempt: (row.attempt ?? -1) + 1, scenario: null,
    };
  }

  private async fail(accountId: string, command: TransferReturn): Promise<void> {
    const envelope = returnResultCommand(accountId, command, {
      transfer_id: command.reversal_id, outcome: 'failed', partner_payment_id: null, failure_code: 'execution_deadline',
      failure_message: 'the return passed its deadline and the partner confirmed it holds no return under its reference',
    });
    await this.runtime.producer.send({
      topic: this.runtime.names.full(TOPICS.ledgerCommands), acks: -1,
      messages: [{ key: accountId, value: await this.runtime.codec.encode(TOPICS.ledgerCommands, envelope) }],
    });
  }

  /** A new instruction: the dispatcher finds the return by its reference and follows it. */
  private async followAgain(partner: string, accountId: string, command: TransferReturn): Promise<void> {
    const envelope: PartnerCommandEnvelope = partnerEnvelope(partner, accountId, { type: 'transfer.return', payload: command }, wallNow());
    await this.runtime.producer.send({
      topic: this.runtime.names.full(TOPICS.partnerCommands), acks: -1,
      messages: [{ key: envelope.resource_id, value: await this.runtime.codec.encode(TOPICS.partnerCommands, envelope) }],
    });
  }
}
