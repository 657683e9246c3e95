// Scheduled transfers (DESIGN.md section 5i): a body of POST /v1/transfers to send at run_at, and
// again every day, week or month up to count runs. The API validates and keeps the schedule; the
// due-runs worker beside the ledger runs it (consumers/ledger/scheduled-runs.ts), each run one
// transfer decided by the ledger like any other. Credentials and scopes are those of transfers.
import { formatAmount, parseAmount, requireCurrency } from '../../ledger/money';
import { now } from '../clock';
import type { Db } from '../db';
import { DomainError, isDomainError } from '../domain-error';
import { actingAccountId, actingAccountIdForWrite, assertOwnResource } from '../http/acting-account';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type BodyOf, type RouteDef, type RouteRequest } from '../http/route';
import { idParams } from '../http/validation';
import { derivedUuid, idempotentCommandId } from '../idempotency/derived-ids';
import { asReplay } from '../idempotency/guard';
import { createBodySchema, transferCommand, type CreateTransferBody } from '../transfers/commands';
import { REPEAT_EVERY, RUNS_MAX } from './occurrences';
import { SCHEDULE_STATUSES, type Schedule, type ScheduledTransfers } from './schedules';
import { scheduleSchema, scheduleView } from './views';

const { account_id: _masterOnly, ...transferProperties } = createBodySchema.properties;
/** What each run sends: POST /v1/transfers's body, the account being the schedule's. */
const transferSchema = { ...createBodySchema, properties: transferProperties, description: `the body of POST /v1/transfers (without account_id), sent at each run: ${createBodySchema.description}` } as const;

/**
 * How far in the past run_at may be and still be taken: as now. A client that asks for "now" (its
 * clock a little behind ours, its request a moment on the way) means "run it at once", not a
 * mistake; anything older is refused.
 */
const RUN_AT_PAST_TOLERANCE_MS = 60_000;

const createBody = {
  type: 'object', additionalProperties: false, required: ['transfer', 'run_at'],
  properties: {
    transfer: transferSchema,
    run_at: {
      type: 'string', format: 'date-time',
      description: `when the first run falls due: an instant in the future, at most a year ahead (one up to ${RUN_AT_PAST_TOLERANCE_MS / 1000} s past is taken as now: it runs at once)`,
    },
    repeat: {
      type: 'object', additionalProperties: false, required: ['every', 'count'],
      description: 'absent: one run. month: the same day of the month as run_at, the month\'s last day when it has fewer (Jan 31, Feb 28 or 29, Mar 31), in UTC',
      properties: {
        every: { type: 'string', enum: [...REPEAT_EVERY] },
        count: { type: 'integer', minimum: 1, maximum: RUNS_MAX, description: `runs in all, the first included: 1 to ${RUNS_MAX}` },
      },
    },
    account_id: { type: 'string', format: 'uuid', description: 'master key only' },
  },
} as const;
type CreateBody = BodyOf<typeof createBody>;

const READ = { kind: 'key', scope: 'transfers:read' } as const;
const WRITE = { kind: 'key', scope: 'transfers:write' } as const;

/** The same day of the month a year on (Feb 29 to Mar 1): the latest run_at taken. */
function aYearAfter(at: Date): Date {
  const later = new Date(at);
  later.setUTCFullYear(later.getUTCFullYear() + 1);
  return later;
}

/**
 * run_at as a schedule takes it, read against the account's own now (src/clock.ts).
 * @throws DomainError invalid_request naming run_at
 */
function runAtOf(text: string, at: Date): Date {
  const runAt = new Date(text);
  if (runAt.getTime() < at.getTime() - RUN_AT_PAST_TOLERANCE_MS) throw new DomainError('invalid_request', `run_at must be in the future (it is ${at.toISOString()} now)`, 'run_at');
  if (runAt.getTime() > aYearAfter(at).getTime()) throw new DomainError('invalid_request', `run_at may lie at most a year ahead (${aYearAfter(at).toISOString()})`, 'run_at');
  return runAt;
}

/**
 * The transfer as every run will send it, checked now as POST /v1/transfers checks it (the ledger
 * decides the rest at each run); its amount at the currency's scale. Errors name `transfer.<field>`.
 */
function checkedTransfer(transfer: CreateTransferBody, scheduleId: string): Schedule['transfer'] {
  try {
    transferCommand(transfer, scheduleId); // for its checks: each run's command is made with the run's own transfer id
    const currency = requireCurrency(transfer.currency);
    return { ...transfer, amount: formatAmount(parseAmount(transfer.amount, currency), currency) };
  } catch (error) {
    if (!isDomainError(error)) throw error;
    throw new DomainError(error.code, `transfer: ${error.message}`, `transfer${error.details ? `.${error.details}` : ''}`);
  }
}

export function scheduledTransferRoutes(db: Db, schedules: ScheduledTransfers): RouteDef[] {
  const own = async (request: RouteRequest): Promise<Schedule> => {
    const schedule = await schedules.byId(request.params.id);
    if (!schedule) throw new DomainError('scheduled_transfer_not_found', 'no such scheduled transfer', request.params.id);
    assertOwnResource(request, schedule.account_id, schedule.id);
    return schedule;
  };
  return [
    withBody(createBody, {
      method: 'POST', path: '/v1/scheduled-transfers', operationId: 'createScheduledTransfer', tag: 'transfers',
      summary: 'Schedule a transfer: sent at run_at, and again every day, week or month up to count runs; each run one transfer, decided by the ledger',
      auth: { ...WRITE, moneyMoving: true }, idempotent: true,
      response: { status: 201, description: 'the schedule, scheduled', schema: scheduleSchema },
      errors: ['unsupported_pair', 'invalid_currency'],
      errorNotes: { invalid_request: 'details names the field: run_at (in the past, or more than a year ahead), repeat.count, transfer.amount, transfer.recipient_email, ...: nothing is stored' },
      handler: async (request: RouteRequest<CreateBody>) => {
        const accountId = await actingAccountIdForWrite(request, db);
        const at = await now(db, accountId);
        const runAt = runAtOf(request.body.run_at, at);
        // The id derives from the account and the key: a repeated request names the same schedule.
        const id = derivedUuid('scheduled-transfer', idempotentCommandId(accountId, request.idempotencyKey!));
        const transfer = checkedTransfer(request.body.transfer, id);
        const { repeat } = request.body;
        const made = await schedules.create({ id, accountId, transfer, fingerprint: request.fingerprint!, runAt, every: repeat?.every ?? null, count: repeat?.count ?? 1, at });
        const answer = { status: 201, body: scheduleView(made.schedule) };
        return made.created ? answer : asReplay(answer);
      },
    }),
    {
      method: 'GET', path: '/v1/scheduled-transfers', operationId: 'listScheduledTransfers', tag: 'transfers',
      summary: "The caller's scheduled transfers, newest first, each with its runs", auth: READ,
      query: listQuerySchema({
        status: { type: 'string', enum: [...SCHEDULE_STATUSES], description: 'only schedules in this status' },
        account_id: { type: 'string', format: 'uuid', description: 'master key only' },
      }),
      response: { status: 200, description: 'a page of scheduled transfers', schema: listResponseSchema(scheduleSchema) },
      handler: async (request) => ({ status: 200, body: await schedules.page(actingAccountId(request), request.query.status, request.query, scheduleView) }),
    },
    {
      method: 'GET', path: '/v1/scheduled-transfers/{id}', operationId: 'getScheduledTransfer', tag: 'transfers',
      summary: 'One scheduled transfer, with its next run and every run so far', auth: READ, params: idParams,
      response: { status: 200, description: 'the schedule', schema: scheduleSchema },
      errors: ['scheduled_transfer_not_found', 'cross_account_access_denied'],
      handler: async (request) => ({ status: 200, body: scheduleView(await own(request)) }),
    },
    {
      method: 'POST', path: '/v1/scheduled-transfers/{id}/cancel', operationId: 'cancelScheduledTransfer', tag: 'transfers',
      summary: 'Cancel what has not run: a run already started is decided as any run; cancelling a cancelled schedule changes nothing',
      auth: WRITE, idempotent: true, params: idParams,
      response: { status: 200, description: 'the schedule, cancelled', schema: scheduleSchema },
      errors: ['scheduled_transfer_not_found', 'cross_account_access_denied', 'scheduled_transfer_completed'],
      errorNotes: { scheduled_transfer_completed: 'every run of the schedule has run: nothing is left to cancel, and nothing changes' },
      handler: async (request) => {
        const schedule = await own(request);
        return { status: 200, body: scheduleView(await schedules.cancel(schedule.id, await now(db, schedule.account_id))) };
      },
    },
  ];
}
