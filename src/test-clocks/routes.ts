// Test clocks (DESIGN.md section 5i, sandbox only, as Stripe's): a clock is made without a
// credential, as a sandbox account is; it is read and advanced with a credential of an account on
// it (POST /v1/sandbox/accounts with test_clock_id), or the master key. An advance answers at once
// with the clock `advancing`; the worker beside the ledger does, in time order and once, what fell
// due for the clock's accounts, then the clock is `ready` at its new time.
import { wallNow } from '../clock';
import type { Environment } from '../config';
import { DomainError } from '../domain-error';
import { withBody, type RouteDef, type RouteRequest } from '../http/route';
import { idParams } from '../http/validation';
import { ADVANCE_MAX_MS, DAY_MS, TEST_CLOCK_STATUSES, testClockView, type TestClockRow, type TestClocks } from './clocks';

const testClockSchema = {
  type: 'object', required: ['id', 'name', 'status', 'frozen_time', 'advancing_to', 'created_at'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: ['string', 'null'] },
    status: { type: 'string', enum: [...TEST_CLOCK_STATUSES], description: 'advancing from an advance until everything that fell due on the way is done; then ready' },
    frozen_time: { type: 'string', format: 'date-time', description: 'the clock\'s time: what "now" is for the accounts on it (while advancing, the instant reached so far)' },
    advancing_to: { type: ['string', 'null'], format: 'date-time', description: 'while advancing: the time the clock is moving to' },
    created_at: { type: 'string', format: 'date-time', description: 'when the clock was made (wall time)' },
  },
} as const;

const frozenTime = (description: string) => ({ type: 'string', format: 'date-time', description } as const);
const SANDBOX_ONLY = 'sandbox routes do not exist in the live environment';

export function testClockRoutes(clocks: TestClocks, environment: Environment): RouteDef[] {
  const sandboxOnly = () => {
    if (environment !== 'sandbox') throw new DomainError('resource_not_found', SANDBOX_ONLY);
  };
  /** The clock, for an account on it or the master key; another account's is refused as another's resource is. */
  const reachable = async (request: RouteRequest): Promise<TestClockRow> => {
    sandboxOnly();
    const clock = await clocks.byId(request.params.id);
    if (!clock) throw new DomainError('test_clock_not_found', 'no such test clock', request.params.id);
    const principal = request.principal!;
    if (!principal.isAdmin && !(await clocks.isOnClock(principal.accountId!, clock.id))) {
      throw new DomainError('cross_account_access_denied', 'this test clock belongs to other accounts', clock.id);
    }
    return clock;
  };
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['frozen_time'],
      properties: { frozen_time: frozenTime('the clock\'s time to begin with (any instant)'), name: { type: 'string', minLength: 1, maxLength: 200 } },
    }, {
      method: 'POST', path: '/v1/sandbox/test-clocks', operationId: 'createTestClock', tag: 'sandbox',
      summary: 'Make a test clock: accounts made on it (POST /v1/sandbox/accounts with test_clock_id) read its time, not the wall\'s',
      auth: { kind: 'public' },
      response: { status: 201, description: 'the clock, ready', schema: testClockSchema },
      handler: async ({ body }) => {
        sandboxOnly();
        const clock = await clocks.create({ frozenTime: new Date(body.frozen_time), name: body.name ?? null, at: wallNow() });
        return { status: 201, body: testClockView(clock) };
      },
    }),
    {
      method: 'GET', path: '/v1/sandbox/test-clocks/{id}', operationId: 'getTestClock', tag: 'sandbox',
      summary: 'A test clock: its time and whether an advance is under way', auth: { kind: 'key', scope: null }, params: idParams,
      response: { status: 200, description: 'the clock', schema: testClockSchema },
      errors: ['test_clock_not_found', 'cross_account_access_denied'],
      errorNotes: { cross_account_access_denied: 'no account on the clock is the caller\'s' },
      handler: async (request) => ({ status: 200, body: testClockView(await reachable(request)) }),
    },
    withBody({
      type: 'object', additionalProperties: false, required: ['frozen_time'],
      properties: { frozen_time: frozenTime(`the clock's new time: after its current one, at most ${ADVANCE_MAX_MS / DAY_MS} days after it`) },
    }, {
      method: 'POST', path: '/v1/sandbox/test-clocks/{id}/advance', operationId: 'advanceTestClock', tag: 'sandbox',
      summary: 'Move a test clock forward: what falls due on the way for its accounts (hold expiries, scheduled runs) is done in time order, once; then the clock is ready',
      auth: { kind: 'key', scope: null }, params: idParams,
      response: { status: 200, description: 'the clock, advancing (GET it until it is ready)', schema: testClockSchema },
      errors: ['test_clock_not_found', 'cross_account_access_denied', 'test_clock_advancing'],
      errorNotes: {
        invalid_request: `details frozen_time: not after the clock's time (a clock never goes back), or more than ${ADVANCE_MAX_MS / DAY_MS} days ahead of it`,
        test_clock_advancing: 'an earlier advance is still under way: advance again once the clock is ready; nothing changes',
        cross_account_access_denied: 'no account on the clock is the caller\'s',
      },
      handler: async (request) => {
        const clock = await reachable(request);
        return { status: 200, body: testClockView(await clocks.advance(clock.id, new Date(request.body.frozen_time), wallNow())) };
      },
    }),
  ];
}
