// Webhook delivery benchmark (DESIGN.md section 5d), the service split as deployed with the webhook
// dispatcher in a process of its own, receivers as real HTTP servers in this process:
//  1. latency: internal transfers at a steady rate (open loop) whose events go to one endpoint;
//     each delivery is timed from its event's created_at (the ledger's decision, just before its
//     commit) to the receiver's answer, on one clock;
//  2. throughput: a backlog of events made while the dispatcher is down, then the dispatcher started
//     and timed until every delivery was answered (deliveries/s one dispatcher sustains).
//
//   npm run bench:webhooks
//
// Settings (environment): BENCH_RATE (25 transfers/s: 100 events/s, the sender having 4 per transfer), BENCH_DURATION_S (30),
// BENCH_WARMUP_S (5), BENCH_BACKLOG_TRANSFERS (5000), BENCH_PORT (3300).
import { randomUUID } from 'node:crypto';
import { createDb } from '../../src/db';
import { startReceiver, type Receiver } from '../support/webhook-receiver';
import { cpuBetween, cpuSnapshot, otherCpu } from './cpu';
import { benchNames, percentile, RUN_ID, rssMiB, runBench, sleep, startService, waitReady, type BenchService } from './harness';
import { openLoop, postJson, printOpenLoop, startSplitService } from './open-loop';

const env = process.env;
const RATE = Number(env.BENCH_RATE ?? 25); // the sender has 4 events per internal transfer: 100 events/s
const DURATION_S = Number(env.BENCH_DURATION_S ?? 30);
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 5);
const BACKLOG_TRANSFERS = Number(env.BENCH_BACKLOG_TRANSFERS ?? 5000);
const BACKLOG_SENDERS = 8;
const PORT = Number(env.BENCH_PORT ?? 3300);
const DISPATCHER_PORT = PORT + 10; // not listened on: the dispatcher has no HTTP role
const names = benchNames('webhooks');

async function account(label: string): Promise<{ key: string; email: string }> {
  const email = `bench-webhooks-${label}-${RUN_ID}-${randomUUID().slice(0, 8)}@example.com`;
  const response = await fetch(`http://127.0.0.1:${PORT}/v1/sandbox/accounts`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'bench-password-1234', business_name: 'Bench Webhooks Ltd', country_code: 'GB' }),
  });
  const body = await response.json() as { api_key: { key: string } };
  return { key: body.api_key.key, email };
}

async function subscribedSender(label: string, receiver: Receiver): Promise<{ key: string; email: string }> {
  const sender = await account(label);
  const funded = await postJson(PORT, '/v1/sandbox/faucet', { currency: 'USD', amount: '1000000.00' }, sender.key);
  if (funded.status !== 201) throw new Error(`funding failed: ${funded.status} ${JSON.stringify(funded.body)}`);
  const endpoint = await postJson(PORT, '/v1/webhooks', { url: receiver.url }, sender.key);
  if (endpoint.status !== 201) throw new Error(`endpoint failed: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
  return sender;
}

const ms = (v: number) => v.toFixed(1);

runBench(names, async (services) => {
  console.log(`webhook benchmark: ${RATE} transfers/s for ${DURATION_S} s after ${WARMUP_S} s warm-up, then a backlog of ${BACKLOG_TRANSFERS} transfers; run ${RUN_ID}`);
  services.push(...await startSplitService(PORT, names.databaseUrl, 'webhooks', {}, ['mock-rails,ledger,partners,request-logs', 'api,notifier']));
  const startDispatcher = async (): Promise<BenchService> => {
    const dispatcher = startService({ port: DISPATCHER_PORT, roles: 'webhooks', databaseUrl: names.databaseUrl, extraEnv: { LOG_LEVEL: 'info' } }, 'webhooks');
    services.push(dispatcher);
    await waitReady(dispatcher, false);
    return dispatcher;
  };
  let dispatcher = await startDispatcher();
  const recipient = await account('recipient');

  // 1. Latency at a steady rate.
  const steady = await startReceiver();
  const sender = await subscribedSender('steady', steady);
  const pids = () => services.map((s) => s.child.pid!);
  const started = Date.now();
  const result = await openLoop(RATE, WARMUP_S, DURATION_S, pids(), () =>
    postJson(PORT, '/v1/transfers', { recipient_email: recipient.email, amount: '1.00', currency: 'USD' }, sender.key).then((r) => r.status));
  await sleep(2_000);
  printOpenLoop('POST /v1/transfers (the load)', RATE, DURATION_S, result, pids());
  const measured = steady.received.filter((r) => Date.parse(r.event.created_at) >= started + WARMUP_S * 1000);
  const latencies = measured.map((r) => r.at - Date.parse(r.event.created_at)).sort((a, b) => a - b);
  console.log(`\nwebhook deliveries at ${(measured.length / DURATION_S).toFixed(0)} events/s: ${measured.length} measured`);
  console.log(`  event created (ledger decision) -> receiver answers 2xx: p50 ${ms(percentile(latencies, 0.5))} ms, p99 ${ms(percentile(latencies, 0.99))} ms, max ${ms(latencies.at(-1) ?? NaN)} ms`);
  console.log(`  dispatcher RSS ${rssMiB(dispatcher.child.pid!)} MiB`);

  // 2. Throughput draining a backlog made while the dispatcher is down.
  await sleep(1_000);
  services.splice(services.indexOf(dispatcher), 1);
  dispatcher.child.kill('SIGTERM');
  await new Promise((resolve) => dispatcher.child.once('exit', resolve));
  const backlog = await startReceiver();
  const senders = await Promise.all(Array.from({ length: BACKLOG_SENDERS }, (_, i) => subscribedSender(`backlog-${i}`, backlog)));
  let next = 0;
  const worker = async () => {
    while (next < BACKLOG_TRANSFERS) {
      const i = next++;
      const sent = await postJson(PORT, '/v1/transfers', { recipient_email: recipient.email, amount: '1.00', currency: 'USD' }, senders[i % BACKLOG_SENDERS].key);
      if (sent.status !== 201) throw new Error(`transfer failed: ${sent.status} ${JSON.stringify(sent.body)}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const expected = await (async () => {
    // Every event of the backlog senders since their endpoints were made: what must be delivered.
    const db = createDb(names.databaseUrl, 1);
    try {
      const { rows } = await db.raw(`SELECT count(*)::int AS n FROM account_events o JOIN webhook_endpoints e ON e.account_id = o.account_id
        WHERE (o.payload->>'created_at')::timestamptz >= e.created_at AND e.url = ?`, [backlog.url]);
      return rows[0].n as number;
    } finally {
      await db.destroy();
    }
  })();
  console.log(`\nbacklog: ${expected} events of ${BACKLOG_SENDERS} accounts, one endpoint each, made while the dispatcher was down`);
  const drainStart = Date.now();
  dispatcher = await startDispatcher();
  const cpuBefore = cpuSnapshot(pids());
  await backlog.waitFor(expected, () => true, 600_000);
  const drainMs = Date.now() - drainStart;
  const cpu = cpuBetween(cpuBefore, cpuSnapshot(pids()), drainMs);
  const unique = new Set(backlog.received.map((r) => r.event.id)).size;
  console.log(`  drained in ${(drainMs / 1000).toFixed(1)} s (from the dispatcher's start): ${(expected / (drainMs / 1000)).toFixed(0)} deliveries/s; ${unique} distinct events, ${backlog.received.length} requests`);
  console.log(`  dispatcher RSS ${rssMiB(dispatcher.child.pid!)} MiB; CPU % of one core: service ${cpu.service.toFixed(0)}, postgres ${cpu.postgres.toFixed(0)}, JVMs ${cpu.jvm.toFixed(0)}, load generator (the receivers) ${cpu.loadGenerator.toFixed(0)}, other ${otherCpu(cpu).toFixed(0)}`);
  await steady.close();
  await backlog.close();
  if (unique !== expected || result.statuses.size !== 1 || !result.statuses.has(201)) process.exitCode = 1;
});
