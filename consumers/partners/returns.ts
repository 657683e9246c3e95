// Returns through a partner (DESIGN.md section 5h; ledger/commands/transfer-reverse.ts, transfer-return-result.ts): a transfer.return
// instruction asks the partner that paid a transfer out to return part of that payment. It is
// carried as a payout is (follow.ts), under the reversal's id as reference, so a redelivered
// instruction finds the return already asked for instead of asking twice; the partner's answer goes
// to the ledger as transfer.return_result under `return_result:<reversal id>:<outcome>`, so the
// ledger drops a repeated one. The payout table of outcome.ts decides each step: a return the
// partner declines, rejects, reverses or confirms it never made is `failed`.
//
// A reversal the ledger no longer holds pending is never asked for again. A partner that makes a
// return after the ledger failed it changes nothing in the ledger: reconciliation finds its line
// without a movement (statement_only) for finance to work.
import { setTimeout as sleep } from 'node:timers/promises';
import type { LedgerCommandEnvelope, PartnerCommandEnvelope, TransferReturn } from '../../ledger/messages';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import type { TransferReturnResult } from '../../ledger/commands/transfer-return-result';
import { PoisonMessageError } from '../../src/kafka/consumer';
import { log } from '../../src/log';
import { isSandboxScenario } from '../../src/partners/scenarios';
import { claimInstruction, reversalState } from './claims';
import { carry, outputOf, type CarryDeps, type Output } from './follow';
import { ATTEMPTS_MAX, decidePartnerOutcome, type Followed } from './outcome';
import { wallNow } from '../../src/clock';

const isText = (value: unknown): value is string => typeof value === 'string' && value !== '';

/**
 * The return in a delivered transfer.return command (`where` names it).
 * @throws PoisonMessageError when it breaks the contract of ledger/messages.ts: a bug.
 */
export function parseReturn(where: string, payload: unknown): TransferReturn {
  const fields = payload as Record<string, unknown> | null;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)
    || !isText(fields.transfer_id) || !isText(fields.reversal_id) || !isText(fields.payment_id) || !isText(fields.amount) || !isText(fields.currency)
    || !Number.isInteger(fields.attempt) || (fields.attempt as number) < 0) {
    throw new PoisonMessageError(`${where}: payload is not a transfer.return (transfer_id, reversal_id, payment_id, amount, currency, attempt)`);
  }
  return fields as unknown as TransferReturn;
}

/** The ledger command of a return's result: one per reversal and outcome, so a second one is a duplicate to the ledger. */
export function returnResultCommand(accountId: string, command: TransferReturn, followed: TransferPartnerResult): LedgerCommandEnvelope {
  const result: TransferReturnResult = {
    transfer_id: command.transfer_id, reversal_id: command.reversal_id, outcome: followed.outcome === 'completed' ? 'completed' : 'failed',
    partner_return_id: followed.partner_payment_id, failure_code: followed.failure_code, failure_message: followed.failure_message,
  };
  return {
    id: `return_result:${result.reversal_id}:${result.outcome}`, type: 'transfer.return_result', account_id: accountId, reply_to: null,
    issued_at: wallNow().toISOString(), payload: JSON.stringify(result),
  };
}

/**
 * Carries one return as far as the partner allows now, once per reversal state: a stale copy finds
 * a newer claim, and a reversal the ledger has decided is not asked for again.
 * @throws on a bug (outcome.ts).
 */
export async function executeReturn(deps: CarryDeps, envelope: PartnerCommandEnvelope, command: TransferReturn, source: string): Promise<Output> {
  // Followed under the reversal's id: the partner knows the return by it.
  const followed: Followed = { transfer_id: command.reversal_id, attempt: command.attempt };
  const toLedger = (result: TransferPartnerResult) => returnResultCommand(envelope.account_id, command, result);
  const client = deps.clients.get(envelope.partner);
  if (client === undefined) return outputOf(decidePartnerOutcome(followed, { kind: 'unknown_partner', partner: envelope.partner }), command.attempt, toLedger);
  const state = await reversalState(deps.db, command.transfer_id, command.reversal_id);
  if (state !== null && state !== 'pending') return { kind: 'none' };
  if (!(await claimInstruction(deps.db, `return:${command.reversal_id}`, command.attempt, source))) {
    log.info({ reversalId: command.reversal_id, attempt: command.attempt }, 'a stale return instruction was dropped: a newer one has run');
    return { kind: 'none' };
  }
  if (command.attempt > ATTEMPTS_MAX) await sleep(deps.requeuePauseMs);
  const decision = await carry(client, followed, deps.pollMsMax, () => client.submitReturn(command.payment_id, {
    reference: command.reversal_id, amount: command.amount, currency: command.currency,
    ...(isSandboxScenario(command.scenario) ? { scenario: command.scenario } : {}),
  }));
  return outputOf(decision, command.attempt, toLedger);
}
