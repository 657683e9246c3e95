// A scheduled transfer as the API shows it (DESIGN.md section 5i), and the schema of that answer.
import { REPEAT_EVERY, RUNS_MAX } from './occurrences';
import { RUN_STATUSES, SCHEDULE_STATUSES, type RunRow, type Schedule } from './schedules';

const dateTime = { type: 'string', format: 'date-time' } as const;

const runErrorSchema = {
  type: ['object', 'null'], required: ['success', 'error', 'message', 'details'],
  description: 'why the ledger refused the run\'s transfer: the error body of POST /v1/transfers (insufficient_funds, recipient_not_found, ...); null unless refused',
  properties: { success: { type: 'boolean', const: false }, error: { type: 'string' }, message: { type: 'string' }, details: { type: ['string', 'null'] } },
};

const runSchema = {
  type: 'object', required: ['occurrence', 'scheduled_for', 'run_at', 'transfer_id', 'status', 'error'],
  properties: {
    occurrence: { type: 'integer', minimum: 1, maximum: RUNS_MAX, description: 'which run of the schedule: 1 is the run at run_at' },
    scheduled_for: { ...dateTime, description: 'when the occurrence fell due by the schedule' },
    run_at: { ...dateTime, description: 'when it ran: later than scheduled_for when the service was down at its time (each missed occurrence runs once, in order, when it is back)' },
    transfer_id: {
      type: ['string', 'null'], format: 'uuid',
      description: 'the run\'s transfer (GET /v1/transfers/{id}), the one transfer this occurrence ever makes: its id is derived from the schedule and the occurrence; null when refused',
    },
    status: {
      type: 'string', enum: [...RUN_STATUSES],
      description: 'pending: its transfer is with the ledger; created: the ledger created the transfer (follow its own status there); refused: the ledger refused it, why in error, and the schedule goes on',
    },
    error: runErrorSchema,
  },
};

export const scheduleSchema = {
  type: 'object', required: ['id', 'status', 'transfer', 'run_at', 'next_run_at', 'repeat', 'runs', 'created_at', 'updated_at', 'cancelled_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    status: {
      type: 'string', enum: [...SCHEDULE_STATUSES],
      description: 'scheduled: runs are still to come; completed: every occurrence has run (the last one\'s outcome may still be pending for a moment); cancelled: cancelled before its last run',
    },
    transfer: {
      type: 'object', required: ['amount', 'currency'], additionalProperties: true,
      properties: { amount: { type: 'string' }, currency: { type: 'string' }, recipient_email: { type: 'string' }, recipient: { type: 'object' }, note: { type: 'string' }, from_wallet_id: { type: 'string' } },
      description: 'the body of POST /v1/transfers each run sends, as it was given',
    },
    run_at: { ...dateTime, description: 'when the first run falls due' },
    next_run_at: { type: ['string', 'null'], format: 'date-time', description: 'when the next run falls due; null when none is left (completed or cancelled)' },
    repeat: {
      type: ['object', 'null'], required: ['every', 'count'], description: 'null: one run',
      properties: {
        every: { type: 'string', enum: [...REPEAT_EVERY], description: 'month: the same day of the month as run_at, the month\'s last day when it has fewer (Jan 31, Feb 28 or 29, Mar 31), in UTC' },
        count: { type: 'integer', minimum: 1, maximum: RUNS_MAX, description: 'runs in all, the first included' },
      },
    },
    runs: { type: 'array', items: runSchema, description: 'the runs so far, in the order of their occurrences' },
    created_at: dateTime, updated_at: dateTime,
    cancelled_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

const iso = (at: Date | null) => (at === null ? null : at.toISOString());

const runView = (run: RunRow) => ({
  occurrence: run.occurrence, scheduled_for: run.scheduled_for.toISOString(), run_at: run.run_at.toISOString(),
  transfer_id: run.status === 'refused' ? null : run.transfer_id, status: run.status, error: run.error,
});

export const scheduleView = (schedule: Schedule) => ({
  id: schedule.id, status: schedule.status, transfer: schedule.transfer,
  run_at: schedule.run_at.toISOString(), next_run_at: iso(schedule.next_run_at),
  repeat: schedule.repeat_every === null ? null : { every: schedule.repeat_every, count: schedule.repeat_count },
  runs: schedule.runs.map(runView),
  created_at: schedule.created_at.toISOString(), updated_at: schedule.updated_at.toISOString(), cancelled_at: iso(schedule.cancelled_at),
});
