// Starts the whole service in this process against the real stack, with the test settings
// exported by scripts/test.sh (own database, topic prefix and Redis prefix).
import { randomUUID } from 'node:crypto';
import { startLedger } from '../../consumers/ledger/runner';
import { clockPayments } from '../../consumers/partners/clock-payments';
import { loadConfig, type Config } from '../../src/config';
import { startRoles, type RunningRole } from '../../src/roles';
import { openRuntime, type Runtime } from '../../src/runtime';
import { TcpProxy } from './tcp-proxy';

export interface TestService {
  baseUrl: string;
  runtime: Runtime;
  config: Config;
  roles: RunningRole[];
  stop(): Promise<void>;
}

export const WEBHOOK_TEST_SETTINGS = {
  WEBHOOK_RETRY_SCHEDULE_MS: '100,200,400', WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_DISABLE_AFTER_MS: '2500',
};

const SCHEDULED_TRANSFER_TEST_SETTINGS = { SCHEDULED_TRANSFER_DAY_MS: '1000', SCHEDULED_RUNS_SWEEP_MS: '250', SCHEDULED_RUN_RESEND_AFTER_MS: '2000' };

export async function startService(overrides: NodeJS.ProcessEnv = {}): Promise<TestService> {
  // Tests count the rails' round trips: spurious "Invalid token" answers only where a test asks for them.
  // Webhook retries, timeouts and disabling in seconds, not hours, so tests can watch them happen;
  // as with the real settings, one delivery's schedule ends long before an endpoint is disabled.
  // The dispatcher polls at its own pace (WEBHOOK_POLL_MS, 500 ms): it sends each retry when due
  // on its own, and a poll every 100 ms cost each worker's service ten statements a second.
  // The deadline of executing transfers is a day: the files that test it backdate transfers by an
  // hour and drive a checker of their own, which the service's own must not race. The settler
  // takes a pending payment over after 4 s, not 10: the tests' partners answer a refusal at once,
  // so a request's own retries are over long before. A scheduled transfer's day lasts a second and
  // its worker looks for due runs every 250 ms, so a daily schedule runs several times within a
  // test; a run left undecided is sent again after 2 s (the tests that stop the ledger see it).
  // Streams and webhooks fetch each event as it comes: an idle service of a worker then fetches
  // twice a second, not forty times (a run of the suite: 22 CPU-s of the broker's, not 30 to 37);
  // the batched fetch of the service's default is run by the simulation and the chaos suite.
  const config = loadConfig({
    ...process.env, PORT: '0', MOCK_RAILS_PORT: '0', MOCK_RAILS_INVALID_TOKEN_PER_MILLE: '0', TRANSFER_EXECUTING_DEADLINE_MS: String(24 * 3_600_000), PAYMENT_RESUBMIT_AFTER_MS: '4000', EVENT_FETCH_WAIT_MS: '0',
    ...WEBHOOK_TEST_SETTINGS, ...SCHEDULED_TRANSFER_TEST_SETTINGS, ...overrides,
  });
  const runtime = await openRuntime(config);
  // Roles that failed to start stopped themselves (startRoles); the connections go with them.
  const roles = await startRoles(runtime, config.roles).catch(async (error: unknown) => {
    await runtime.close();
    throw error;
  });
  const api = roles.find((r) => r.role === 'api');
  return {
    baseUrl: api?.url ?? '',
    runtime,
    config,
    roles,
    async stop() {
      for (const role of [...roles].reverse()) await role.stop();
      await runtime.close();
    },
  };
}

/** The ledger role of `service` started again, as startRoles starts it: its test clocks' payments told to the service's own rails. */
export function restartLedger(service: TestService): Promise<RunningRole> {
  const rails = service.roles.find((r) => r.role === 'mock-rails');
  return startLedger(service.runtime, { clockWork: clockPayments(service.runtime, rails?.url) });
}

/** Books of their own for mock rails a test starts beside the service's (src/mock-rails/schema.ts). */
export function ownRailsBooks(): { databaseUrl: string; book: string } {
  return { databaseUrl: process.env.DATABASE_URL!, book: `test_${randomUUID()}` };
}

/** A service of its own whose Postgres and Redis are reached through proxies a test can slow down or cut. */
export interface ServiceBehindProxies { service: TestService; postgres: TcpProxy; redis: TcpProxy; stop(): Promise<void> }

export async function startServiceBehindProxies(overrides: NodeJS.ProcessEnv): Promise<ServiceBehindProxies> {
  const database = new URL(process.env.DATABASE_URL!);
  const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const postgres = await TcpProxy.start(database.hostname, Number(database.port || 5432));
  const redis = await TcpProxy.start(redisUrl.hostname, Number(redisUrl.port || 6379));
  database.port = String(postgres.port);
  redisUrl.port = String(redis.port);
  const service = await startService({ DATABASE_URL: database.toString(), REDIS_URL: redisUrl.toString(), ...overrides }).catch(async (error: unknown) => {
    await postgres.stop();
    await redis.stop();
    throw error;
  });
  return {
    service, postgres, redis,
    // Both dependencies back at full speed first, so the service stops cleanly.
    async stop() {
      postgres.replyDelayMs = 0;
      await postgres.restore();
      await redis.restore();
      await service.stop();
      await postgres.stop();
      await redis.stop();
    },
  };
}
