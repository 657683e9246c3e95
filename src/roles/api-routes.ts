// Every route table of the API, one surface a line, in the order they are served and documented
// (the router matches and the OpenAPI document lists them in this order).
import { AccountService } from '../accounts/service';
import { apiKeyRoutes } from '../accounts/api-key-routes';
import { accountRoutes } from '../accounts/routes';
import { faucetRoutes } from '../accounts/faucet-routes';
import { KeyCache } from '../auth/key-cache';
import { SessionRevocations } from '../auth/session-revocations';
import { balanceAlertRoutes } from '../balance-alerts/routes';
import { LedgerReads } from '../balances/reads';
import { ledgerReadRoutes } from '../balances/routes';
import { contactRoutes } from '../customers/contact-routes';
import { customerRoutes } from '../customers/routes';
import { FxQuotes } from '../fx/quotes';
import { fxRoutes } from '../fx/routes';
import { SignInLockout } from '../guards/sign-in-lockout';
import { HoldReads } from '../holds/reads';
import { holdRoutes } from '../holds/routes';
import { metaRoutes } from '../operations/meta-routes';
import type { RouteDef } from '../http/route';
import { DeadLetters } from '../kafka/dead-letters';
import { OutboxSetAside } from '../outbox/set-aside';
import { LedgerClient } from '../ledger-client/client';
import { eventRoutes } from '../notifications/event-list-routes';
import { NotificationHub } from '../notifications/hub';
import { notificationRoutes } from '../notifications/routes';
import { deadLetterRoutes } from '../operations/dead-letter-routes';
import { outboxSetAsideRoutes } from '../operations/outbox-routes';
import { partnerAccess } from '../partner-links/access';
import { partnerLinkRoutes } from '../partner-links/routes';
import { PaymentReads } from '../payments/reads';
import { paymentRoutes } from '../payments/routes';
import { reconciliationExceptionRoutes } from '../reconciliation/exception-routes';
import { ExceptionDesk } from '../reconciliation/exceptions';
import { Reconciliations } from '../reconciliation/reports';
import { reconciliationRoutes } from '../reconciliation/routes';
import { RequestLogReads } from '../request-logs/reads';
import { requestLogRoutes } from '../request-logs/routes';
import type { Runtime } from '../runtime';
import { scheduledTransferRoutes } from '../scheduled-transfers/routes';
import { TestClocks } from '../test-clocks/clocks';
import { testClockRoutes } from '../test-clocks/routes';
import { ScheduledTransfers } from '../scheduled-transfers/schedules';
import { financeRoutes } from '../statements/routes';
import { TransferBatchReads } from '../transfer-batches/reads';
import { transferBatchRoutes } from '../transfer-batches/routes';
import { TransferReads } from '../transfers/reads';
import { transferRoutes } from '../transfers/routes';
import { reversalRoutes } from '../transfers/reversal-routes';
import { unreachableTransferRoutes } from '../transfers/unreachable-routes';
import { UnreachableTransfers } from '../transfers/unreachable-reads';
import { SecretVault } from '../vault';
import { WalletReads } from '../wallets/reads';
import { walletRoutes } from '../wallets/routes';
import { Wallets } from '../wallets/service';
import { WebhookDeliveries } from '../webhooks/deliveries';
import { webhookDeliveryRoutes } from '../webhooks/delivery-routes';
import { WebhookEndpoints } from '../webhooks/endpoints';
import { webhookRoutes } from '../webhooks/routes';
import { sessionTokens } from './session-tokens';

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
    }), new SessionRevocations(runtime.db, runtime.redis)),
    ...apiKeyRoutes(accounts),
    ...customerRoutes(runtime.db),
    ...contactRoutes(runtime.db),
    ...requestLogRoutes(new RequestLogReads(db)),
    ...transferRoutes(db, new TransferReads(db), deps.ledger, config.environment, config.ledgerReplyTimeoutMs),
    ...reversalRoutes(new TransferReads(db), deps.ledger, config.ledgerReplyTimeoutMs),
    ...scheduledTransferRoutes(db, new ScheduledTransfers(db)),
    ...testClockRoutes(new TestClocks(db), config.environment),
    ...ledgerReadRoutes(new LedgerReads(db)),
    ...faucetRoutes(db, deps.ledger, config.environment, config.ledgerReplyTimeoutMs),
    ...fxRoutes({
      db, quotes: new FxQuotes(db, config.fxQuoteLifetimeMs), ledger: deps.ledger,
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
    ...paymentRoutes({ db, ledger: deps.ledger, ...partners, reads: new PaymentReads(db), replyTimeoutMs: config.ledgerReplyTimeoutMs, resubmitAfterMs: config.paymentResubmitAfterMs }, config.environment, () => deps.railsUrl, config.mockRailsControlSecret),
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
