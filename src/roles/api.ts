// The API role: the HTTP server of every route table, warmed before it listens, drained on stop.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dashboardMiddleware } from '../dashboard-host/routes';
import { createApp } from '../http/app';
import { startIdempotencySweeper } from '../idempotency/sweep';
import { kafkaThreadSettings } from '../kafka/thread';
import { TOPICS } from '../kafka/topics';
import { LedgerClient } from '../ledger-client/client';
import { log } from '../log';
import { PARTNER_LINK_CALLBACK_PATH } from '../partners/registry';
import { RequestLogRecorder } from '../request-logs/recorder';
import type { RunningRole, Runtime } from '../runtime';
import { exercise, fillPool, knowTopics, warmUp, type WarmUpRequest } from '../warm-up';
import { apiGuards } from './api-guards';
import { apiRoutes, type ApiDeps } from './api-routes';
import type { ProcessContext } from './context';

function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { server.closeAllConnections(); }, graceMs);
    server.close(() => { clearTimeout(timer); resolve(); });
    server.closeIdleConnections();
  });
}

export async function startApi(runtime: Runtime, context: ProcessContext): Promise<RunningRole> {
  const { config } = runtime;
  context.step = 'the request log thread';
  const recorder = await RequestLogRecorder.start(kafkaThreadSettings(config));
  context.step = 'the ledger reply consumer joining its group';
  const ledger = new LedgerClient(runtime);
  await ledger.start();
  const { guards, limiter } = apiGuards(runtime, recorder);
  const { hub } = context;
  let publicUrl = config.publicUrl ?? '';
  const deps: ApiDeps = { ledger, hub, publicUrl: () => publicUrl, railsUrl: context.rails?.url ?? config.mockRailsUrl };
  const routes = apiRoutes(runtime, deps);
  const app = createApp({ routes, guards, bodyLimitBytes: config.bodyLimitBytes, dashboard: dashboardMiddleware(), environment: config.environment });
  // Warm-up requests are served apart, neither limited nor logged: they are not clients'.
  const warmUpApp = createApp({ routes, guards: { ...guards, rateLimit: async () => undefined, credentialAttempt: undefined, recordRequest: () => undefined }, bodyLimitBytes: config.bodyLimitBytes, environment: config.environment });
  // Before it listens: its first clients meet a process as fast as it will be.
  context.step = 'warming up';
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
