// The stage a run or a replay plays on: the run's own service processes on the shared stack (their
// ports, settings and namespace, two ledgers among them), the proxies its partitions cut, and the set-up (one account per client with its customer linked
// with both partners, a webhook endpoint and receiver, an event stream, and its first funds;
// then the accounts on test clocks, clock-stage.ts).
import fs from 'node:fs';
import path from 'node:path';
import { benchNames, cleanUpRedisKeys, cleanUpTopics, recreateDatabase } from '../bench/harness';
import { RoleProcess } from '../chaos/components';
import { signUp } from '../support/accounts';
import { collectEvents } from '../support/load';
import { linkCustomer } from '../support/partner-links';
import { TcpProxy } from '../support/tcp-proxy';
import { startReceiver } from '../support/webhook-receiver';
import { runOp } from './clients';
import { setUpClocks } from './clock-stage';
import type { FaultTargets } from './faults';
import { KeySource } from './keys';
import { streamSeed, type ProcessTarget } from './plan';
import type { Findings } from './findings';
import { Http } from './http';
import { Latencies } from './latency';
import { Model } from './model';
import { RateBook } from './rates';
import type { Trace } from './trace';
import { CLOCK_MARGIN_MS, type Member, type World } from './world';

const PORT = 4800;
export const baseUrl = `http://127.0.0.1:${PORT + 30}`;
// The role processes take their Redis prefix from benchNames('chaos') (test/chaos/components.ts).
export const names = benchNames('chaos');
/** The service processes' logs of the last run. */
export const LOG_DIR = path.join(process.cwd(), '.simulation', 'logs');
const FUNDING_CENTS = 100_000;

/**
 * What a run's faults act on. The API reaches Kafka, and the first ledger Postgres, through TCP
 * proxies the run can cut (a partition: connections dropped, new ones refused) or stall (requests
 * arrive, replies never do); the second ledger is connected directly, so the two share the
 * ledger's partitions and meet each other's locks.
 */
let stage: { targets: FaultTargets; proxies: TcpProxy[] } | null = null;

/** A fresh database, the proxies, and the run's processes started. */
export async function startStage(): Promise<FaultTargets> {
  await recreateDatabase(names.databaseUrl);
  const [kafkaHost, kafkaPort] = (process.env.KAFKA_FAULT_LISTENER ?? '127.0.0.1:9094').split(':');
  const apiKafka = await TcpProxy.start(kafkaHost, Number(kafkaPort), Number(process.env.KAFKA_FAULT_PROXY_PORT ?? 9095));
  const database = new URL(names.databaseUrl);
  const ledgerPostgres = await TcpProxy.start(database.hostname, Number(database.port || 5432));
  const proxiedDatabase = new URL(names.databaseUrl);
  proxiedDatabase.port = String(ledgerPostgres.port);
  const rails = `http://127.0.0.1:${PORT + 1}`;
  // Each process's log, across its restarts, for a failure's cause (a 500's stack, by its request id).
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  fs.mkdirSync(LOG_DIR, { recursive: true });
  const logFile = (target: ProcessTarget) => path.join(LOG_DIR, `${target}.log`);
  const roles: Record<ProcessTarget, RoleProcess> = {
    rails: new RoleProcess({ name: 'mock rails', roles: 'mock-rails', port: PORT, http: false, extraEnv: { PUBLIC_URL: baseUrl }, logFile: logFile('rails') }, names.databaseUrl),
    workers: new RoleProcess({ name: 'dispatchers', roles: 'partners,webhooks,request-logs', port: PORT + 10, http: false, extraEnv: { MOCK_RAILS_URL: rails }, logFile: logFile('workers') }, names.databaseUrl),
    ledger: new RoleProcess({ name: 'ledger', roles: 'ledger', port: PORT + 20, http: false, logFile: logFile('ledger') }, proxiedDatabase.toString()),
    ledger2: new RoleProcess({ name: 'second ledger', roles: 'ledger', port: PORT + 40, http: false, logFile: logFile('ledger2') }, names.databaseUrl),
    api: new RoleProcess({ name: 'api', roles: 'api,notifier', port: PORT + 30, http: true, extraEnv: { MOCK_RAILS_URL: rails, PUBLIC_URL: baseUrl, KAFKA_BROKERS: `127.0.0.1:${apiKafka.port}` }, logFile: logFile('api') }, names.databaseUrl),
  };
  const targets: FaultTargets = { roles, links: { api_kafka: apiKafka, ledger_postgres: ledgerPostgres }, flushRedisKeys: () => cleanUpRedisKeys(names.redisKeyPrefix), railsUrl: rails };
  stage = { targets, proxies: [apiKafka, ledgerPostgres] };
  // The first start may follow a broker restart (the chaos suite runs just before it in CI):
  // Kafka recovers every partition's log before it serves, which can take minutes.
  for (const role of Object.values(roles)) await role.start(300_000);
  return targets;
}

export async function stopStage(world: World | null): Promise<void> {
  world?.members.forEach((m) => m.stream.close());
  await Promise.all((world?.members ?? []).map((m) => m.receiver.close()));
  for (const role of Object.values(stage?.targets.roles ?? {}).reverse()) await role.stop();
  for (const proxy of stage?.proxies ?? []) await proxy.stop();
  await Promise.all([cleanUpTopics(names.kafkaTopicPrefix), cleanUpRedisKeys(names.redisKeyPrefix)]).catch(() => undefined);
}

/** Leaves no process of the run behind (after an error). */
export function killStage(): void {
  for (const role of Object.values(stage?.targets.roles ?? {})) {
    role.service?.child.kill('SIGCONT');
    role.kill();
  }
  for (const proxy of stage?.proxies ?? []) void proxy.stop();
}

/** An empty world: no member yet, the model, the checks, and the trace (a run's) if any. */
export function createWorld(findings: Findings, trace: Trace | null, members: Member[] = []): World {
  const latencies = new Latencies();
  return {
    http: new Http(baseUrl, findings, trace, latencies), model: new Model(), rates: new RateBook(findings), latencies, findings, members,
    unlearned: [], partnerBook: new Map(), open: [], ordered: [], clockMarginMs: CLOCK_MARGIN_MS, stats: { ops: 0, faults: 0, crossings: 0 }, clocks: null,
  };
}

/** One member per client, funded; the same in a run and in its replay (but for the ids the service makes). */
export async function setUp(world: World, seed: number, clients: number): Promise<void> {
  for (let i = 0; i < clients; i++) {
    const signed = await signUp(baseUrl, { chain_wallet: true });
    const keys = new KeySource(streamSeed(seed, 2000 + i));
    const customer = await world.http.decide(i, '/v1/customers', { email: `sim-${signed.account.id}@example.com`, business_name: 'Simulated Customer', country_code: 'DE' }, keys.uuid(), { token: signed.key });
    for (const partner of ['openbank', 'fiat']) await linkCustomer(baseUrl, signed.key, customer!.body.id, partner);
    // A receiver that fails one request in ten, so deliveries are retried.
    const receiver = await startReceiver((_, n) => (n % 10 === 0 ? { status: 503 } : { status: 200 }));
    const endpoint = await world.http.decide(i, '/v1/webhooks', { url: receiver.url }, keys.uuid(), { token: signed.key });
    if (endpoint?.status !== 201) throw new Error(`webhook endpoint not made: ${JSON.stringify(endpoint)}`);
    const stream = await collectEvents(baseUrl, signed.token);
    world.members.push({
      index: i, accountId: signed.account.id, email: signed.email, key: signed.key, token: signed.token, vibans: signed.vibans as any[], keys,
      customerId: customer!.body.id, webhookId: endpoint.body.id, webhookSecret: endpoint.body.secret, receiver, stream, transfers: [], payments: [], quotes: [], wallets: [], holds: [], internals: [], alerts: [], batches: [], doubtful: [],
    });
  }
  for (const member of world.members) {
    for (const currency of ['USD', 'EUR', 'GBP', 'USDC'] as const) await runOp(world, member, { kind: 'faucet', currency, cents: FUNDING_CENTS, misbehave: null });
  }
  world.clocks = await setUpClocks(world, seed, clients);
  world.stats.ops = 0;
}
