// Process roles (DESIGN.md section 3): one codebase, one process per role or all in one.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLedger } from '../consumers/ledger/runner';
import { startNotifier } from '../consumers/notifier/runner';
import { startPartnerDispatcher } from '../consumers/partners/runner';
import { startRequestLogWriter } from '../consumers/request-logs/runner';
import { startWebhookDispatcher } from '../consumers/webhooks/runner';
import { AccountService } from './accounts/service';
import { Authenticator } from './auth/authenticate';
import { SessionTokens } from './auth/credentials';
import { KeyCache } from './auth/key-cache';
import { SessionRevocations } from './auth/session-revocations';
import type { Role } from './config';
import { accountRoutes } from './accounts/routes';
import { apiKeyRoutes } from './accounts/api-key-routes';
import { createApp, type Guards } from './http/app';
import { contactRoutes } from './customers/contact-routes';
import { customerRoutes } from './customers/routes';
import { faucetRoutes } from './accounts/faucet-routes';
import { FxQuotes } from './fx/quotes';
import { fxRoutes } from './fx/routes';
import { ledgerReadRoutes } from './balances/routes';
import { financeRoutes } from './statements/routes';
import { reconciliationRoutes } from './reconciliation/routes';
import { reconciliationExceptionRoutes } from './reconciliation/exception-routes';
import { dashboardMiddleware } from './dashboard-host/routes';
import { eventRoutes } from './notifications/event-list-routes';
import { ExceptionDesk } from './reconciliation/exceptions';
import { Reconciliations } from './reconciliation/reports';
import { transferRoutes } from './transfers/routes';
import { notificationRoutes } from './notifications/routes';
import { walletRoutes } from './wallets/routes';
import { WalletReads } from './wallets/reads';
import { Wallets } from './wallets/service';
import { holdRoutes } from './holds/routes';
import { balanceAlertRoutes } from './balance-alerts/routes';
import { transferBatchRoutes } from './transfer-batches/routes';
import { TransferBatchReads } from './transfer-batches/reads';
import { HoldReads } from './holds/reads';
import { LedgerClient } from './ledger-client/client';
import { startMockRailsRole } from './mock-rails/role';
import type { MockRails } from './mock-rails/server';
import { partnerLinkRoutes } from './partner-links/routes';
import { partnerAccess } from './partner-links/access';
import { PARTNER_LINK_CALLBACK_PATH } from './partners/registry';
import { paymentRoutes } from './payments/routes';
import { webhookRoutes } from './webhooks/routes';
import { webhookDeliveryRoutes } from './webhooks/delivery-routes';
import { WebhookDeliveries } from './webhooks/deliveries';
import { WebhookEndpoints } from './webhooks/endpoints';
import { SecretVault } from './vault';
import { PaymentReads } from './payments/reads';
import { NotificationHub } from './notifications/hub';
import { metaRoutes } from './operations/meta-routes';
import { requestLogRoutes } from './request-logs/routes';
import { deadLetterRoutes } from './operations/dead-letter-routes';
import { DeadLetters } from './kafka/dead-letters';
import { outboxSetAsideRoutes } from './operations/outbox-routes';
import { unreachableTransferRoutes } from './transfers/unreachable-routes';
import { UnreachableTransfers } from './transfers/unreachable-reads';
import { OutboxSetAside } from './kafka/outbox-set-aside';
import { LedgerReads } from './balances/reads';
import { RequestLogReads } from './request-logs/reads';
import { TransferReads } from './transfers/reads';
import type { RouteDef } from './http/route';
import { IdempotencyGuard } from './idempotency/guard';
import { startIdempotencySweeper } from './idempotency/sweep';
import { log } from './log';
import { RateLimiter } from './guards/rate-limit';
import { SignInLockout } from './guards/sign-in-lockout';
import { exercise, fillPool, knowTopics, warmUp, type WarmUpRequest } from './warm-up';
import { TOPICS } from './kafka/topics';
import { LedgerAnswerCache } from './idempotency/answer-cache';
import { kafkaThreadSettings } from './kafka/thread';
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
  /** The process's one hub: the notifier role feeds it, the event streams read it. */
  hub: NotificationHub;
  /** How partners and browsers reach this API: known once it listens. */
  publicUrl: () => string;
  /** The partners' base address (this process's own mock rails, or the configured one). */
  railsUrl: string;
}

/** The routes of the API; without deps (tests listing routes) the clients are created idle. */
export function apiRoutes(runtime: Runtime, deps: ApiDeps = {
  ledger: new LedgerClient(runtime), hub: new NotificationHub(),
  publicUrl: () => runtime.config.publicUrl ?? `http://${runtime.config.host}:${runtime.config.port}`, railsUrl: runtime.config.mockRailsUrl,
}): RouteDef[] {
  const { config, db } = runtime;
  const partners = partnerAccess(config, db, deps.railsUrl, deps.publicUrl);
  const accounts = new AccountService(db, config, sessionTokens(runtime), new KeyCache(runtime.redis));
  const webhookEndpoints = new WebhookEndpoints(db, new SecretVault(config.webhookSecretKey, 'webhook-secret-vault'));
  const routes: RouteDef[] = [];
  routes.push(
    ...metaRoutes(runtime, () => routes),
    ...accountRoutes(accounts, runtime.config.environment, new SignInLockout(runtime.redis, {
      freeFailures: config.signInFreeFailures, baseMs: config.signInLockoutMs, maxMs: config.signInLockoutMsMax,
    }), new SessionRevocations(runtime.redis)),
    ...apiKeyRoutes(accounts),
    ...customerRoutes(runtime.db),
    ...contactRoutes(runtime.db),
    ...requestLogRoutes(new RequestLogReads(db)),
    ...transferRoutes(db, new TransferReads(db), deps.ledger, config.environment, config.ledgerReplyTimeoutMs),
    ...ledgerReadRoutes(new LedgerReads(db)),
    ...faucetRoutes(db, deps.ledger, config.environment, config.ledgerReplyTimeoutMs),
    ...fxRoutes({
      db, quotes: new FxQuotes(db, runtime.redis, config.fxQuoteLifetimeMs), ledger: deps.ledger,
      environment: config.environment, replyTimeoutMs: config.ledgerReplyTimeoutMs,
    }),
    ...notificationRoutes(db, deps.hub, config.sseHeartbeatMs),
    ...eventRoutes(db),
    ...partnerLinkRoutes(db, partners.links),
    ...webhookRoutes(db, webhookEndpoints, config.environment, config.webhookPrivateAddresses),
    ...webhookDeliveryRoutes(webhookEndpoints, new WebhookDeliveries(db), config.environment),
    ...financeRoutes(db),
    ...reconciliationRoutes(new Reconciliations(runtime, partners.clients)),
    ...reconciliationExceptionRoutes(new ExceptionDesk(runtime, deps.ledger, config.ledgerReplyTimeoutMs)),
    ...paymentRoutes({ db, ledger: deps.ledger, ...partners, reads: new PaymentReads(db), replyTimeoutMs: config.ledgerReplyTimeoutMs }, config.environment, () => deps.railsUrl, config.mockRailsControlSecret),
    ...deadLetterRoutes(new DeadLetters(db, runtime.producer)),
    ...outboxSetAsideRoutes(new OutboxSetAside(db, runtime)),
    ...unreachableTransferRoutes(new UnreachableTransfers(db)),
    ...walletRoutes({ db, reads: new WalletReads(db), wallets: new Wallets(db), ledger: deps.ledger, replyTimeoutMs: config.ledgerReplyTimeoutMs }),
    ...holdRoutes({ db, reads: new HoldReads(db), ledger: deps.ledger, replyTimeoutMs: config.ledgerReplyTimeoutMs }),
    ...balanceAlertRoutes(db),
    ...transferBatchRoutes({ db, reads: new TransferBatchReads(db), ledger: deps.ledger, replyTimeoutMs: config.ledgerReplyTimeoutMs }),
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

async function startApi(runtime: Runtime, context: ProcessContext): Promise<RunningRole> {
  const { config } = runtime;
  const recorder = await RequestLogRecorder.start(kafkaThreadSettings(config));
  const ledger = new LedgerClient(runtime);
  await ledger.start();
  const authenticator = new Authenticator(runtime.db, config, sessionTokens(runtime), new KeyCache(runtime.redis), new SessionRevocations(runtime.redis));
  const limiter = new RateLimiter(runtime.redis, config.rateLimitRps, config.rateLimitBurst, { ratePerSecond: config.attemptRateLimitRps, burst: config.attemptRateLimitBurst });
  const guards: Guards = {
    authenticationReads: authenticator.reads,
    authenticate: authenticator.authenticate,
    rateLimit: limiter.limit,
    credentialAttempt: limiter.attempt,
    idempotent: new IdempotencyGuard(runtime.db, runtime.redis, IDEMPOTENCY_WAIT_MS_MAX).run,
    ledgerAnswers: new LedgerAnswerCache(runtime.redis),
    recordRequest: recorder.record,
  };
  const { hub } = context;
  let publicUrl = config.publicUrl ?? '';
  const deps: ApiDeps = { ledger, hub, publicUrl: () => publicUrl, railsUrl: context.rails?.url ?? config.mockRailsUrl };
  const routes = apiRoutes(runtime, deps);
  const app = createApp({ routes, guards, bodyLimitBytes: config.bodyLimitBytes, dashboard: dashboardMiddleware(), environment: config.environment });
  // Warm-up requests are served apart, neither limited nor logged: they are not clients'.
  const warmUpApp = createApp({ routes, guards: { ...guards, rateLimit: async () => undefined, credentialAttempt: undefined, recordRequest: () => undefined }, bodyLimitBytes: config.bodyLimitBytes, environment: config.environment });
  // Before it listens: its first clients meet a process as fast as it will be.
  await warmUp('api', [
    () => fillPool(runtime.db),
    () => knowTopics(runtime, [TOPICS.ledgerCommands]),
    () => limiter.warm(),
    () => exercise(warmUpApp, API_WARM_UP_REQUESTS, 100),
  ]);
  const server = app.listen(config.port, config.host);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => { server.once('listening', resolve); server.once('error', reject); });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  if (!config.publicUrl) {
    publicUrl = url;
    // This process's own rails learn the callback of the port the API took.
    context.rails?.registerRedirectUri(`${url}${PARTNER_LINK_CALLBACK_PATH}`);
  }
  log.info({ url }, 'api listening');
  // The records this role writes expire after 24 hours; API processes sweep them side by side.
  const sweeper = startIdempotencySweeper(runtime.db, config.idempotencySweepMs);
  return {
    role: 'api',
    url,
    stop: async () => {
      hub.closeAll(); // open event streams end now, so their clients reconnect elsewhere
      await closeServer(server, 10_000);
      await sweeper.stop();
      await ledger.stop();
      await recorder.stop();
    },
  };
}

/**
 * What the API's warm-up sends: the request paths every client takes (validation, pricing, the
 * credential check against Postgres, the error body), none of which stores anything.
 */
const API_WARM_UP_REQUESTS: WarmUpRequest[] = [
  { method: 'POST', path: '/v1/fx/quotes', body: { from_currency: 'USD', to_currency: 'EUR', from_amount: '10.00' } },
  { method: 'POST', path: '/v1/transfers', headers: { authorization: 'Bearer sk_sandbox_warmupwarmupwarmupwarmupwarmup', 'idempotency-key': 'warm-up' }, body: { recipient_email: 'nobody@example.com', amount: '1.00', currency: 'USD' } },
  { method: 'GET', path: '/healthz' },
];

/** What roles of one process share. */
interface ProcessContext {
  hub: NotificationHub;
  /** This process's own mock rails, when it runs them (they may have taken a free port). */
  rails: MockRails | undefined;
}

const STARTERS: Record<Role, (runtime: Runtime, context: ProcessContext) => Promise<RunningRole>> = {
  'mock-rails': async (runtime, context) => {
    const role = await startMockRailsRole(runtime);
    context.rails = role.rails;
    return role;
  },
  ledger: startLedger,
  partners: (runtime, context) => startPartnerDispatcher(runtime, { railsUrl: context.rails?.url }),
  notifier: (runtime, context) => startNotifier(runtime, context.hub),
  webhooks: startWebhookDispatcher,
  'request-logs': startRequestLogWriter,
  api: startApi,
};

/** Starts the roles in dependency order: rails before their callers, the API last. */
export async function startRoles(runtime: Runtime, roles: Role[]): Promise<RunningRole[]> {
  const context: ProcessContext = { hub: new NotificationHub(), rails: undefined };
  const running: RunningRole[] = [];
  for (const role of Object.keys(STARTERS) as Role[]) {
    if (roles.includes(role)) running.push(await STARTERS[role](runtime, context));
  }
  return running;
}
