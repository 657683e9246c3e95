// The runs of scheduled transfers, as the due-runs worker (consumers/ledger/scheduled-runs.ts)
// makes them: exactly one transfer per occurrence, however the service crashes or restarts.
//
// 1. Claim: a due schedule's next occurrence is claimed in one short transaction that locks the
//    schedule (FOR UPDATE SKIP LOCKED: two workers never claim one occurrence), writes its run
//    (pending) and moves the schedule on to the next occurrence. The run's primary key is the
//    schedule and the occurrence: no occurrence has two runs.
// 2. Send: the run's transfer goes to the ledger as a plain transfer.create, under a command id
//    and a transfer id derived from the schedule and the occurrence. The ledger decides a command
//    id once (processed_commands, in the transaction that moves the money; a duplicate in a later
//    round is answered from it, one in the same round is dropped), so sending it again changes
//    nothing: a run still pending some time after it was sent (its worker died before or after
//    sending, or Kafka lost it) is simply sent again, by any worker, waiting longer each time.
// 3. Record: the worker does not wait for the ledger's reply. It reads the decision where the
//    ledger keeps it, the processed command, and records it on the run with its
//    scheduled_transfer.run event, in one transaction whose update only a pending run passes: the
//    outcome and the event are written once. The path after a crash is the path without one (no
//    reply to lose, no waiting request to resume), which is what keeps exactly-once simple.
import { randomUUID } from 'node:crypto';
import { writeOutboxRound } from '../outbox/rounds';
import type { DomainEventEnvelope, LedgerCommandEnvelope } from '../../ledger/messages';
import type { TransferCreate } from '../../ledger/commands/transfer-create';
import { formatAmount, type Currency } from '../../ledger/money';
import { parseOutcome } from '../../ledger/outcome';
import { inClockScope, type ClockScope } from '../clock';
import type { Db } from '../db';
import { derivedUuid } from '../idempotency/derived-ids';
import { domainEventHeaders, TOPICS } from '../kafka/topics';
import { publishRound } from '../outbox/publish-round';
import type { Runtime } from '../runtime';
import { transferCommand, type CreateTransferBody } from '../transfers/commands';
import { occurrenceAt } from './occurrences';
import type { RunError, RunRow, RunStatus, ScheduleRow } from './schedules';

const runCommandId = (scheduleId: string, occurrence: number): string => `scheduled_transfer.run:${scheduleId}:${occurrence}`;
export const runTransferId = (scheduleId: string, occurrence: number): string => derivedUuid('scheduled-transfer-run', scheduleId, String(occurrence));

/** A run's transfer.create, as the ledger is sent it (again and again, the same message). */
function runCommand(run: Pick<RunRow, 'account_id' | 'command_id' | 'transfer_id'>, transfer: ScheduleRow['transfer'], at: Date): LedgerCommandEnvelope {
  const payload: TransferCreate = transferCommand(transfer as CreateTransferBody, run.transfer_id);
  return {
    id: run.command_id, type: 'transfer.create', account_id: run.account_id, reply_to: null, issued_at: at.toISOString(),
    payload: JSON.stringify(payload), idempotency_key: null, fingerprint: null, request_id: null,
  };
}

/** Announced at the commit of every insert into scheduled_transfers (migrations/20261208090000_announce_clock_advances_and_schedules.ts). */
export const SCHEDULES_ADDED_CHANNEL = 'scheduled_transfers_added';

/**
 * What the worker has to do: occurrences due by `at`, runs waiting for the ledger, and when the
 * next occurrence falls due (null: none is scheduled). One statement, as the idle sweep is.
 */
export async function workWaiting(db: Db, at: Date, clockId: ClockScope = null): Promise<{ due: boolean; pending: boolean; nextDueAt: Date | null }> {
  const schedules = inClockScope('s.account_id', clockId);
  const runs = inClockScope('r.account_id', clockId);
  const { rows } = await db.raw(
    `SELECT (SELECT s.next_run_at FROM scheduled_transfers s WHERE s.status = 'scheduled' AND ${schedules.sql} ORDER BY s.next_run_at LIMIT 1) AS next_due_at,
            EXISTS (SELECT 1 FROM scheduled_transfer_runs r WHERE r.status = 'pending' AND ${runs.sql}) AS pending`,
    [...schedules.bindings, ...runs.bindings],
  );
  const nextDueAt: Date | null = rows[0].next_due_at === null ? null : new Date(rows[0].next_due_at);
  return { due: nextDueAt !== null && nextDueAt.getTime() <= at.getTime(), pending: rows[0].pending, nextDueAt };
}

/**
 * Claims the next due occurrence of up to `max` schedules in the scope, the longest due first, as runs made at
 * `at`; a schedule missed several times has its next one claimed by the next call (each due
 * occurrence runs once, in order). Returns their commands, in the order claimed.
 */
export async function claimDueOccurrences(db: Db, at: Date, dayMs: number, max: number, clockId: ClockScope = null): Promise<LedgerCommandEnvelope[]> {
  const scope = inClockScope('scheduled_transfers.account_id', clockId);
  return db.transaction(async (trx) => {
    const due: ScheduleRow[] = await trx('scheduled_transfers').where('status', 'scheduled').andWhere('next_run_at', '<=', at)
      .andWhereRaw(scope.sql, scope.bindings).orderBy('next_run_at').limit(max).forUpdate().skipLocked();
    const commands: LedgerCommandEnvelope[] = [];
    for (const schedule of due) {
      const occurrence = schedule.next_occurrence;
      const run = {
        schedule_id: schedule.id, occurrence, account_id: schedule.account_id, scheduled_for: schedule.next_run_at!, run_at: at,
        command_id: runCommandId(schedule.id, occurrence), transfer_id: runTransferId(schedule.id, occurrence), status: 'pending' as RunStatus, sent_at: at,
      };
      await trx('scheduled_transfer_runs').insert(run);
      const next = occurrence + 1;
      const last = next > schedule.repeat_count;
      await trx('scheduled_transfers').where('id', schedule.id).update({
        next_occurrence: next, status: last ? 'completed' : 'scheduled', updated_at: at,
        next_run_at: last ? null : occurrenceAt(schedule.run_at, schedule.repeat_every, next, dayMs),
      });
      commands.push(runCommand(run, schedule.transfer, at));
    }
    return commands;
  });
}

/** Runs by schedule, then occurrence. */
const byOccurrence = (a: Pick<RunRow, 'schedule_id' | 'occurrence'>, b: Pick<RunRow, 'schedule_id' | 'occurrence'>): number =>
  (a.schedule_id === b.schedule_id ? a.occurrence - b.occurrence : a.schedule_id < b.schedule_id ? -1 : 1);

/** A run's wait before it is sent again doubles with each send, up to this many times its first wait. */
const RESEND_BACKOFF_MAX = 64;

/**
 * Up to `max` runs still pending `resendAfterMs` after they were last sent (twice that after a
 * second send, four times after a third, ...): marked sent at `at`, and their commands to send again.
 */
export async function runsToSendAgain(db: Db, at: Date, resendAfterMs: number, max: number): Promise<LedgerCommandEnvelope[]> {
  const scope = inClockScope('p.account_id', null);
  const { rows } = await db.raw(
    `UPDATE scheduled_transfer_runs r SET sent_at = ?, sends = r.sends + 1 FROM scheduled_transfers s
      WHERE s.id = r.schedule_id AND (r.schedule_id, r.occurrence) IN (
        SELECT schedule_id, occurrence FROM scheduled_transfer_runs p
         WHERE status = 'pending' AND sent_at < ?::timestamptz - make_interval(secs => ? * least(power(2, sends - 1), ?)) AND ${scope.sql}
         ORDER BY sent_at, schedule_id, occurrence LIMIT ? FOR UPDATE SKIP LOCKED)
      RETURNING r.schedule_id, r.occurrence, r.account_id, r.command_id, r.transfer_id, s.transfer`,
    [at, at, resendAfterMs / 1000, RESEND_BACKOFF_MAX, ...scope.bindings, max],
  );
  // Each schedule's runs in the order of their occurrences, as they were claimed.
  return (rows as Array<RunRow & { transfer: ScheduleRow['transfer'] }>).sort(byOccurrence).map((r) => runCommand(r, r.transfer, at));
}

/**
 * The commands of every run of a clock's accounts still pending (sent, not yet decided), in the
 * order of their occurrences: an advance taken over after a crash sends them again before it steps
 * on (the ledger decides each once).
 */
export async function pendingRunsOfClock(db: Db, clockId: string, at: Date): Promise<LedgerCommandEnvelope[]> {
  const scope = inClockScope('r.account_id', clockId);
  const { rows } = await db.raw(
    `SELECT r.schedule_id, r.occurrence, r.account_id, r.command_id, r.transfer_id, s.transfer
       FROM scheduled_transfer_runs r JOIN scheduled_transfers s ON s.id = r.schedule_id
      WHERE r.status = 'pending' AND ${scope.sql}`,
    scope.bindings,
  );
  return (rows as Array<RunRow & { transfer: ScheduleRow['transfer'] }>).sort(byOccurrence).map((r) => runCommand(r, r.transfer, at));
}

type DecidedRow = RunRow & { outcome: string; amount: string; currency: Currency };

/** What the ledger's outcome makes of a run: its transfer created, or refused and why. */
function decision(outcomeText: string): { status: RunStatus; error: RunError | null } {
  const outcome = parseOutcome(outcomeText);
  if (outcome.kind === 'transfer') return { status: 'created', error: null };
  if (outcome.kind === 'refused') return { status: 'refused', error: { success: false, error: outcome.code, message: outcome.message, details: outcome.field } };
  throw new Error(`the ledger answered a transfer.create with a ${outcome.kind} outcome`);
}

function runEvent(run: DecidedRow, status: RunStatus, error: RunError | null, at: Date, environment: string): DomainEventEnvelope {
  return {
    id: randomUUID(), type: 'scheduled_transfer.run', created_at: at.toISOString(), environment,
    resource_type: 'scheduled_transfer', resource_id: run.schedule_id, account_id: run.account_id, account_seq: 0,
    data: {
      id: run.schedule_id, status, amount: formatAmount(run.amount, run.currency), currency: run.currency,
      attributes: JSON.stringify({
        scheduled_transfer_id: run.schedule_id, occurrence: run.occurrence, scheduled_for: run.scheduled_for.toISOString(), run_at: run.run_at.toISOString(),
        transfer_id: status === 'created' ? run.transfer_id : null, error,
      }),
    },
  };
}

/**
 * Records what the ledger decided of up to `max` pending runs in the scope, each once with its event (one
 * outbox round for them all), and publishes the round.
 */
export async function recordDecidedRuns(runtime: Runtime, at: Date, max: number, clockId: ClockScope = null): Promise<void> {
  const scope = inClockScope('r.account_id', clockId);
  const { rows } = await runtime.db.raw(
    `SELECT r.*, p.outcome::text AS outcome, s.transfer->>'amount' AS amount, s.transfer->>'currency' AS currency
       FROM scheduled_transfer_runs r JOIN processed_commands p ON p.command_id = r.command_id JOIN scheduled_transfers s ON s.id = r.schedule_id
      WHERE r.status = 'pending' AND ${scope.sql} ORDER BY r.sent_at LIMIT ?`,
    [...scope.bindings, max],
  );
  if (rows.length === 0) return;
  const roundId = randomUUID();
  // Updated in the order of their keys: two workers recording the same runs lock them in one order,
  // never in a circle (a run sent again meanwhile moves in the order of sent_at).
  const decided = (rows as DecidedRow[]).sort(byOccurrence);
  const events = await runtime.db.transaction(async (trx) => {
    const written: DomainEventEnvelope[] = [];
    for (const run of decided) {
      const { status, error } = decision(run.outcome);
      // Only a pending run passes: a run another worker recorded first is left as it is, and announced once.
      const updated = await trx('scheduled_transfer_runs').where({ schedule_id: run.schedule_id, occurrence: run.occurrence, status: 'pending' })
        .update({ status, error: error === null ? null : JSON.stringify(error), decided_at: at });
      if (updated === 1) written.push(runEvent(run, status, error, at, runtime.config.environment));
    }
    const outbox = written.map((event) => ({ id: event.id, topic: TOPICS.domainEvents, key: event.resource_id, accountId: event.account_id, payload: event, headers: domainEventHeaders(event.account_id) }));
    if (outbox.length > 0) await writeOutboxRound(trx, roundId, outbox);
    return written;
  });
  if (events.length > 0) await publishRound(runtime, roundId, events);
}
