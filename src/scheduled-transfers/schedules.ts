// Scheduled transfers as the API writes and reads them (DESIGN.md section 5i): a schedule is made
// and cancelled here; its runs are claimed and decided by the due-runs worker (runs.ts).
import type { Db } from '../db';
import { keysetPage, type Page, type PageRequest } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { idempotencyConflict } from '../idempotency/key-reservations';
import type { RepeatEvery } from './occurrences';

export const SCHEDULE_STATUSES = ['scheduled', 'completed', 'cancelled'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];
export const RUN_STATUSES = ['pending', 'created', 'refused'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** A refused run's error: the error body of SPEC.md section 2. */
export interface RunError { success: false; error: string; message: string; details: string | null }

export interface ScheduleRow {
  id: string;
  account_id: string;
  status: ScheduleStatus;
  /** The body of POST /v1/transfers, as given. */
  transfer: Record<string, unknown> & { amount: string; currency: string };
  fingerprint: string;
  run_at: Date;
  repeat_every: RepeatEvery | null;
  repeat_count: number;
  next_occurrence: number;
  next_run_at: Date | null;
  created_at: Date;
  updated_at: Date;
  cancelled_at: Date | null;
}

export interface RunRow {
  schedule_id: string;
  occurrence: number;
  account_id: string;
  scheduled_for: Date;
  run_at: Date;
  command_id: string;
  transfer_id: string;
  status: RunStatus;
  error: RunError | null;
  sent_at: Date;
  decided_at: Date | null;
}

export type Schedule = ScheduleRow & { runs: RunRow[] };

/** What a new schedule says; its id derives from the account and the Idempotency-Key (routes.ts). */
export interface NewSchedule {
  id: string; accountId: string; transfer: ScheduleRow['transfer']; fingerprint: string;
  runAt: Date; every: RepeatEvery | null; count: number; at: Date;
}

export class ScheduledTransfers {
  constructor(private readonly db: Db) {}

  /**
   * Writes the schedule once: a request repeated under its key after its record was lost (the
   * API's idempotency record is kept 24 hours) finds the schedule it made, never makes a second
   * one that would run every transfer twice; another request under that key is a conflict.
   * @throws DomainError idempotency_conflict
   */
  async create(schedule: NewSchedule): Promise<{ schedule: Schedule; created: boolean }> {
    const [row]: ScheduleRow[] = await this.db('scheduled_transfers').insert({
      id: schedule.id, account_id: schedule.accountId, status: 'scheduled', transfer: schedule.transfer, fingerprint: schedule.fingerprint,
      run_at: schedule.runAt, repeat_every: schedule.every, repeat_count: schedule.count, next_occurrence: 1, next_run_at: schedule.runAt,
      created_at: schedule.at, updated_at: schedule.at,
    }).onConflict('id').ignore().returning('*');
    if (row) return { schedule: { ...row, runs: [] }, created: true };
    const existing = (await this.byId(schedule.id))!;
    if (existing.fingerprint !== schedule.fingerprint) throw idempotencyConflict();
    return { schedule: existing, created: false };
  }

  /**
   * Stops what has not run: the occurrences not claimed yet. An occurrence the worker claimed has
   * run (its transfer is the ledger's to decide, and is recorded as any run); the claim and this
   * update take the schedule's row lock in turn, so one comes first and the other sees it.
   * Cancelling a cancelled schedule changes nothing.
   * @throws DomainError scheduled_transfer_completed
   */
  async cancel(id: string, at: Date): Promise<Schedule> {
    const [row]: ScheduleRow[] = await this.db('scheduled_transfers').where({ id, status: 'scheduled' })
      .update({ status: 'cancelled', next_run_at: null, cancelled_at: at, updated_at: at }).returning('*');
    const schedule = (await this.byId(id))!;
    if (!row && schedule.status === 'completed') {
      throw new DomainError('scheduled_transfer_completed', 'every run of the schedule has run: there is nothing left to cancel', id);
    }
    return schedule;
  }

  async byId(id: string): Promise<Schedule | undefined> {
    const row: ScheduleRow | undefined = await this.db('scheduled_transfers').where('id', id).first();
    if (!row) return undefined;
    return { ...row, runs: await this.runsOf([id]).then((runs) => runs.get(id) ?? []) };
  }

  /** The account's schedules, newest first, each with its runs; `status`: only those. */
  async page<Item>(accountId: string, status: ScheduleStatus | undefined, page: PageRequest, view: (schedule: Schedule) => Item): Promise<Page<Item>> {
    const scope = this.db('scheduled_transfers').where('account_id', accountId).select('*');
    const query = scope.clone();
    if (status) query.where('status', status);
    const rows = await keysetPage(query, 'scheduled_transfers', page, (row: ScheduleRow) => row, { scope });
    const runs = await this.runsOf(rows.data.map((r) => r.id));
    return { ...rows, data: rows.data.map((row) => view({ ...row, runs: runs.get(row.id) ?? [] })) };
  }

  /** The runs of schedules, each's in the order of its occurrences. */
  private async runsOf(ids: string[]): Promise<Map<string, RunRow[]>> {
    const byId = new Map<string, RunRow[]>();
    if (ids.length === 0) return byId;
    const rows: RunRow[] = await this.db('scheduled_transfer_runs').whereIn('schedule_id', ids).orderBy(['schedule_id', 'occurrence']);
    for (const run of rows) byId.set(run.schedule_id, [...(byId.get(run.schedule_id) ?? []), run]);
    return byId;
  }
}
