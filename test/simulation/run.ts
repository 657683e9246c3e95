// The whole-service simulation (`npm run simulate -- --seed 7 --minutes 10`; docs in
// ../../../shared/SIMULATION.md and README "Simulation"): the run's own service processes on the
// shared stack, clients sending the seed's operations over every money route, the seed's faults,
// a model checked as answers arrive and, once the system is quiet, against every balance, the
// ledger, the event streams and the webhook receivers. A failure prints the seed, the check and
// each involved client's last operations, and writes them to .simulation/seed-N.json.
import fs from 'node:fs';
import path from 'node:path';
import { createDb } from '../../src/db';
import { benchNames, cleanUpRedisKeys, cleanUpTopics, recreateDatabase } from '../bench/harness';
import { RoleProcess } from '../chaos/components';
import { signUp } from '../support/accounts';
import { collectEvents } from '../support/load';
import { linkCustomer } from '../support/partner-links';
import { startReceiver } from '../support/webhook-receiver';
import { alertChecks, alertSummary } from './alert-ops';
import { parseArgs } from './args';
import { batchChecks, batchSummary } from './batch-ops';
import { endEverything, finalChecks, learnEverything, quiet } from './checks';
import { runOp } from './clients';
import { runFaults, type FaultLog } from './faults';
import { Findings } from './findings';
import { holdChecks, readDoubtful, voidLeftHolds, walletBalanceChecks, walletSummary } from './hold-checks';
import { Http } from './http';
import { Model } from './model';
import { clientOps, faultSchedule, type Op, type ProcessTarget } from './plan';
import type { Member, World } from './world';

const settings = parseArgs(process.argv.slice(2));
const PORT = 4800;
const baseUrl = `http://127.0.0.1:${PORT + 30}`;
// The role processes take their Redis prefix from benchNames('chaos') (test/chaos/components.ts).
const names = benchNames('chaos');
const roles: Record<ProcessTarget, RoleProcess> = {
  rails: new RoleProcess({ name: 'mock rails', roles: 'mock-rails', port: PORT, http: false, extraEnv: { PUBLIC_URL: baseUrl } }, names.databaseUrl),
  workers: new RoleProcess({ name: 'dispatchers', roles: 'partners,webhooks,request-logs', port: PORT + 10, http: false, extraEnv: { MOCK_RAILS_URL: `http://127.0.0.1:${PORT + 1}` } }, names.databaseUrl),
  ledger: new RoleProcess({ name: 'ledger', roles: 'ledger', port: PORT + 20, http: false }, names.databaseUrl),
  api: new RoleProcess({ name: 'api', roles: 'api,notifier', port: PORT + 30, http: true, extraEnv: { MOCK_RAILS_URL: `http://127.0.0.1:${PORT + 1}`, PUBLIC_URL: baseUrl } }, names.databaseUrl),
};
const FUNDING_CENTS = 100_000;

async function setUp(world: World): Promise<void> {
  for (let i = 0; i < settings.clients; i++) {
    const signed = await signUp(baseUrl, { chain_wallet: true });
    const customer = await world.http.decide(i, '/v1/customers', { email: `sim-${signed.account.id}@example.com`, business_name: 'Simulated Customer', country_code: 'DE' }, `setup-customer-${i}`, { token: signed.key });
    for (const partner of ['openbank', 'fiat']) await linkCustomer(baseUrl, signed.key, customer!.body.id, partner);
    // A receiver that fails one request in ten, so deliveries are retried.
    const receiver = await startReceiver((_, n) => (n % 10 === 0 ? { status: 503 } : { status: 200 }));
    const endpoint = await world.http.decide(i, '/v1/webhooks', { url: receiver.url }, `setup-webhook-${i}`, { token: signed.key });
    if (endpoint?.status !== 201) throw new Error(`webhook endpoint not made: ${JSON.stringify(endpoint)}`);
    const stream = await collectEvents(baseUrl, signed.token);
    world.members.push({
      index: i, accountId: signed.account.id, email: signed.email, key: signed.key, token: signed.token, vibans: signed.vibans as any[],
      customerId: customer!.body.id, webhookId: endpoint.body.id, webhookSecret: endpoint.body.secret, receiver, stream, transfers: [], payments: [], quotes: [], wallets: [], holds: [], alerts: [], batches: [], doubtful: [],
    });
  }
  for (const member of world.members) {
    for (const currency of ['USD', 'EUR', 'GBP', 'USDC'] as const) await runOp(world, member, { kind: 'faucet', currency, cents: FUNDING_CENTS, misbehave: null });
  }
}

async function client(world: World, member: Member, until: number): Promise<void> {
  const ops = clientOps(settings.seed, member.index, settings.clients);
  while (Date.now() < until) {
    const op: Op = ops.next().value;
    try {
      await runOp(world, member, op);
    } catch (error) {
      world.findings.expect(false, 'the simulation raised no error', () => `${JSON.stringify(op)}: ${(error as Error).stack?.split('\n').slice(0, 4).join(' | ')}`, [member.index]);
    }
  }
}

function printSummaries(world: World): void {
  console.log(`  wallets and holds: ${walletSummary(world)}`);
  console.log(`  transfer batches: ${batchSummary(world)}`);
  console.log(`  balance alerts: ${alertSummary(world)}`);
}

function report(world: World, faults: FaultLog): void {
  const { findings } = world;
  if (findings.failures.length === 0) {
    console.log(`simulation seed ${settings.seed}: every check passed (${findings.passed} checks, ${world.stats.ops} operations, ${world.http.requests} requests, ${faults.done} faults)`);
    printSummaries(world);
    return;
  }
  printSummaries(world);
  console.log(`\nSIMULATION FAILED, seed ${settings.seed} (--seed ${settings.seed} --minutes ${settings.minutes} --clients ${settings.clients} --faults ${settings.faults})`);
  const byCheck = new Map<string, typeof findings.failures>();
  for (const failure of findings.failures) byCheck.set(failure.check, [...(byCheck.get(failure.check) ?? []), failure]);
  const involved = new Set<number>();
  for (const [check, list] of byCheck) {
    console.log(`  check failed: ${check} (${list.length}×)`);
    for (const failure of list.slice(0, 5)) {
      console.log(`    at ${(failure.atMs / 1000).toFixed(1)} s: ${failure.detail}`);
      failure.clients.forEach((c) => involved.add(c));
    }
  }
  for (const c of [...involved].slice(0, 6)) console.log(`  last operations of client ${c}:\n    ${findings.lastOps(c).join('\n    ')}`);
  console.log(`  faults: ${faults.lines.join('; ') || 'none'}`);
  const file = path.join(process.cwd(), '.simulation', `seed-${settings.seed}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ settings, failures: findings.failures, faults: faults.lines, lastOps: Object.fromEntries([...involved].map((c) => [c, findings.lastOps(c)])) }, null, 2));
  console.log(`  written to ${file}`);
}

async function main(): Promise<void> {
  console.log(`simulation seed ${settings.seed}: ${settings.minutes} min, ${settings.clients} clients, faults ${settings.faults}`);
  await recreateDatabase(names.databaseUrl);
  // The first start may follow a broker restart (the chaos suite runs just before it in CI):
  // Kafka recovers every partition's log before it serves, which can take minutes.
  for (const role of Object.values(roles)) await role.start(300_000);
  const findings = new Findings();
  const world: World = { http: new Http(baseUrl, findings), model: new Model(), findings, members: [], unlearned: [], open: [], stats: { ops: 0, faults: 0, crossings: 0 } };
  await setUp(world);

  const durationMs = settings.minutes * 60_000;
  const startedAt = Date.now();
  const faults: FaultLog = { done: 0, lines: [] };
  const stop = { now: false };
  const progress = setInterval(() => {
    console.log(`  ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s: ${world.stats.ops} operations, ${world.http.requests} requests, ${faults.done} faults${faults.lines.length ? ` (last: ${faults.lines.at(-1)})` : ''}, ${findings.passed} checks passed, ${findings.failures.length} failed`);
  }, 5_000);
  const schedule = faultSchedule(settings.seed, durationMs, settings.faults);
  const faulting = runFaults(schedule, roles, () => cleanUpRedisKeys(names.redisKeyPrefix), `http://127.0.0.1:${PORT + 1}`, startedAt, stop, faults);
  await Promise.all(world.members.map((member) => client(world, member, startedAt + durationMs)));
  stop.now = true;
  await faulting;
  console.log(`  load stopped; learning every outcome and waiting for the system to be quiet`);

  const db = createDb(names.databaseUrl, 2);
  try {
    await learnEverything(world);
    await readDoubtful(world);
    await voidLeftHolds(world);
    if (!await quiet(db, world)) findings.expect(false, 'the system becomes quiet', () => 'transfers, payments or outbox rounds still open after 180 s', []);
    await endEverything(db, world);
    await batchChecks(db, world);
    await alertChecks(db, world);
    await holdChecks(db, world);
    await finalChecks(db, world);
    await walletBalanceChecks(db, world);
  } finally {
    await db.destroy();
    clearInterval(progress);
  }
  report(world, faults);
  world.members.forEach((m) => m.stream.close());
  await Promise.all(world.members.map((m) => m.receiver.close()));
  for (const role of Object.values(roles).reverse()) await role.stop();
  await Promise.all([cleanUpTopics(names.kafkaTopicPrefix), cleanUpRedisKeys(names.redisKeyPrefix)]).catch(() => undefined);
  process.exit(findings.failures.length === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(`simulation seed ${settings.seed} could not run:`, error);
  for (const role of Object.values(roles)) {
    role.service?.child.kill('SIGCONT');
    role.kill(); // leave no process of the run behind
  }
  process.exit(2);
});
