// Process roles (DESIGN.md section 3): one codebase, one process per role or all in one. The
// API's wiring is in api.ts and its route tables in api-routes.ts; the consumers' in consumers/.
import { startLedger } from '../../consumers/ledger/runner';
import { clockPayments } from '../../consumers/partners/clock-payments';
import { startNotifier } from '../../consumers/notifier/runner';
import { startPartnerDispatcher } from '../../consumers/partners/runner';
import { startRequestLogWriter } from '../../consumers/request-logs/runner';
import { startWebhookDispatcher } from '../../consumers/webhooks/runner';
import type { Role } from '../config';
import { log } from '../log';
import { startMockRailsRole } from '../mock-rails/role';
import { NotificationHub } from '../notifications/hub';
import type { RunningRole, Runtime } from '../runtime';
import { startApi } from './api';
import type { ProcessContext } from './context';

export { apiRoutes, type ApiDeps } from './api-routes';
export { sessionTokens } from './session-tokens';
export type { RunningRole };

/**
 * Each role's start, listed in the order startRoles follows. A consumer role that needs nothing
 * of the process context starts from its runner as it is.
 */
const STARTERS: Record<Role, (runtime: Runtime, context: ProcessContext) => Promise<RunningRole>> = {
  'mock-rails': async (runtime, context) => {
    const role = await startMockRailsRole(runtime);
    context.rails = role.rails;
    return role;
  },
  // A test clock's advance tells the partners of payments that fell due: this process's own rails, when it runs them.
  ledger: (runtime, context) => startLedger(runtime, { clockWork: clockPayments(runtime, context.rails?.url) }),
  partners: (runtime, context) => startPartnerDispatcher(runtime, { railsUrl: context.rails?.url }),
  notifier: (runtime, context) => startNotifier(runtime, context.hub),
  webhooks: startWebhookDispatcher,
  'request-logs': startRequestLogWriter,
  api: startApi,
};

/** Starts the roles in dependency order: rails before their callers, the API last. */
export async function startRoles(runtime: Runtime, roles: Role[]): Promise<RunningRole[]> {
  const context: ProcessContext = { hub: new NotificationHub(), rails: undefined, step: '' };
  const running: RunningRole[] = [];
  try {
    for (const role of Object.keys(STARTERS) as Role[]) {
      if (roles.includes(role)) running.push(await timedStart(role, context, () => STARTERS[role](runtime, context)));
    }
  } catch (error) {
    // A start that fails midway leaves none of its roles running (a ledger left behind would go on deciding).
    for (const started of running.reverse()) await started.stop().catch((stopError: unknown) => log.warn({ err: stopError, role: started.role }, 'a role did not stop'));
    throw error;
  }
  return running;
}

/** A role's start that outlasts this is reported while it goes on, so a start that hangs says where. */
const SLOW_START_MS = 10_000;

async function timedStart(role: Role, context: ProcessContext, start: () => Promise<RunningRole>): Promise<RunningRole> {
  const started = performance.now();
  context.step = '';
  const slow = setInterval(() => log.warn({ role, step: context.step, ms: Math.round(performance.now() - started) }, 'role still starting'), SLOW_START_MS);
  try {
    const running = await start();
    const ms = Math.round(performance.now() - started);
    (ms > SLOW_START_MS ? log.warn : log.info).call(log, { role, ms }, 'role started');
    return running;
  } finally {
    clearInterval(slow);
  }
}
