// Process roles (DESIGN.md section 3): one codebase, one process per role or all in one.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLedger } from '../consumers/ledger/runner';
import { startRequestLogWriter } from '../consumers/request-logs/runner';
import { AccountService } from './accounts/service';
import { Authenticator } from './auth/authenticate';
import { SessionTokens } from './auth/credentials';
import type { Role } from './config';
import { accountRoutes } from './http/accounts';
import { apiKeyRoutes } from './http/api-keys';
import { createApp, type Guards } from './http/app';
import { contactRoutes } from './http/contacts';
import { customerRoutes } from './http/customers';
import { ledgerReadRoutes } from './http/ledger-reads';
import { transferRoutes } from './http/transfers';
import { LedgerClient } from './ledger-client';
import { metaRoutes } from './http/meta';
import { requestLogRoutes } from './http/request-logs';
import type { RouteDef } from './http/route';
import { IdempotencyGuard } from './idempotency';
import { log } from './log';
import { RateLimiter } from './rate-limit';
import { RequestLogRecorder } from './request-logs/recorder';
import type { RunningRole, Runtime } from './runtime';

export type { RunningRole };

const IDEMPOTENCY_WAIT_MS_MAX = 10_000;

export function sessionTokens(runtime: Runtime): SessionTokens {
  const { jwtSecret, sessionTtlSeconds, environment } = runtime.config;
  return new SessionTokens(jwtSecret, sessionTtlSeconds, environment);
}

/** What the API's routes use beyond the runtime. */
export interface ApiDeps {
  ledger: LedgerClient;
}

/** The routes of the API; without deps (tests listing routes) the clients are created idle. */
export function apiRoutes(runtime: Runtime, deps: ApiDeps = { ledger: new LedgerClient(runtime) }): RouteDef[] {
  const { config, db } = runtime;
  const accounts = new AccountService(db, config, sessionTokens(runtime));
  const routes: RouteDef[] = [];
  routes.push(
    ...metaRoutes(runtime, () => routes),
    ...accountRoutes(accounts, runtime.config.environment),
    ...apiKeyRoutes(accounts),
    ...customerRoutes(runtime.db),
    ...contactRoutes(runtime.db),
    ...requestLogRoutes(runtime.db),
    ...transferRoutes(db, deps.ledger, config.ledgerReplyTimeoutMs),
    ...ledgerReadRoutes(db, deps.ledger, config.environment, config.ledgerReplyTimeoutMs),
  );
  return routes;
}

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { server.closeAllConnections(); }, graceMs);
    server.close(() => { clearTimeout(timer); resolve(); });
    server.closeIdleConnections();
  });
}

async function startApi(runtime: Runtime): Promise<RunningRole> {
  const { config } = runtime;
  const recorder = new RequestLogRecorder(runtime.producer, runtime.codec, runtime.names);
  const ledger = new LedgerClient(runtime);
  await ledger.start();
  const guards: Guards = {
    authenticate: new Authenticator(runtime.db, config, sessionTokens(runtime)).authenticate,
    rateLimit: new RateLimiter(runtime.redis, config.rateLimitRps, config.rateLimitBurst).limit,
    idempotent: new IdempotencyGuard(runtime.db, runtime.redis, IDEMPOTENCY_WAIT_MS_MAX).run,
    recordRequest: recorder.record,
  };
  const app = createApp({ routes: apiRoutes(runtime, { ledger }), guards, bodyLimitBytes: config.bodyLimitBytes });
  const server = app.listen(config.port, config.host);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => { server.once('listening', resolve); server.once('error', reject); });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  log.info({ url }, 'api listening');
  return {
    role: 'api',
    url,
    stop: async () => {
      await closeServer(server, 10_000);
      await ledger.stop();
      await recorder.flush();
    },
  };
}

const STARTERS: Partial<Record<Role, (runtime: Runtime) => Promise<RunningRole>>> = {
  api: startApi,
  ledger: startLedger,
  'request-logs': startRequestLogWriter,
};

export async function startRoles(runtime: Runtime, roles: Role[]): Promise<RunningRole[]> {
  const running: RunningRole[] = [];
  for (const role of roles) {
    const start = STARTERS[role];
    if (start) running.push(await start(runtime));
  }
  return running;
}
