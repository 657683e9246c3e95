// Light-load latency of the three POSTs that wait for the ledger: POST /v1/transfers,
// /v1/payments/add-funds and /v1/fx/execute, each at a steady 50 and 200 requests/s (open loop:
// a request leaves at its scheduled time, and its latency counts from then). Before them, the
// same machine's Kafka request/reply floor (kafka-floor.ts), so the two can be read side by side.
// The service runs as `npm start` runs it: every role in one process. BENCH_PROCESSES names other
// splits, processes separated by ';' (e.g. "mock-rails,ledger,partners,request-logs;api,notifier").
//
//   npm run bench:latency
//
// Settings (environment): BENCH_RATES ("50,200"), BENCH_DURATION_S (20), BENCH_WARMUP_S (3), BENCH_COLD_S (10; 0 skips the cold start),
// BENCH_ROUTES ("transfers,fx-execute,add-funds"), BENCH_PORT (3400; the rails take the next).
// Targets (issue 17): p50 ≤ 10 ms and p99 ≤ 30 ms at 200/s for each route.
import { randomUUID } from 'node:crypto';
import { linkCustomer } from '../support/partner-links';
import { benchNames, percentile, RUN_ID, runBench, sleep, stopService, type BenchService } from './harness';
import { Anatomy } from './anatomy';
import { measureKafkaFloor } from './kafka-floor';
import { openLoop, postJson, printBySecond, printOpenLoop, startSplitService, type OpenLoopResult, type Sent } from './open-loop';

const env = process.env;
const RATES = (env.BENCH_RATES ?? '50,200').split(',').map(Number);
const DURATION_S = Number(env.BENCH_DURATION_S ?? 20);
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 3);
const ROUTES = (env.BENCH_ROUTES ?? 'transfers,fx-execute,add-funds').split(',');
const PORT = Number(env.BENCH_PORT ?? 3400);
const BASE = `http://127.0.0.1:${PORT}`;
const COLD_S = Number(env.BENCH_COLD_S ?? 10);
const PROCESSES = (env.BENCH_PROCESSES ?? 'all').split(';');
const COLD_RATE = 200;
const SENDERS = 10;
const names = benchNames('latency');

async function signUp(label: string): Promise<{ key: string; email: string }> {
  const email = `bench-${label}-${randomUUID()}@example.com`;
  const answer = await postJson(PORT, '/v1/sandbox/accounts', { email, password: 'bench-password-1234', business_name: 'Bench Ltd', country_code: 'GB' }, null);
  if (answer.status !== 201) throw new Error(`sign-up failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  const key: string = answer.body.api_key.key;
  for (const currency of ['USD', 'EUR', 'GBP']) {
    const funded = await postJson(PORT, '/v1/sandbox/faucet', { currency, amount: '1000000.00' }, key);
    if (funded.status !== 201) throw new Error(`funding failed: ${funded.status} ${JSON.stringify(funded.body)}`);
  }
  return { key, email };
}

/** Makes quotes ahead of the schedule, so an execution never waits for one (their creation is not measured). */
async function quotes(key: string, count: number): Promise<string[]> {
  const pairs = [['USD', 'EUR'], ['EUR', 'USD'], ['USD', 'GBP'], ['GBP', 'EUR']];
  const ids: string[] = [];
  await Promise.all(Array.from({ length: 8 }, async (_, worker) => {
    for (let i = worker; i < count; i += 8) {
      const [from, to] = pairs[i % pairs.length];
      const quote = await postJson(PORT, '/v1/fx/quote', { from_currency: from, to_currency: to, from_amount: '10.00' }, key);
      if (quote.status !== 201) throw new Error(`quote failed: ${quote.status} ${JSON.stringify(quote.body)}`);
      ids.push(quote.body.id);
    }
  }));
  return ids;
}

type Sender = (rate: number) => Promise<() => Promise<Sent> | null>;

async function stopServices(services: BenchService[]): Promise<void> {
  for (const service of [...services].reverse()) await stopService(service);
}

runBench(names, async (services) => {
  const floor = await measureKafkaFloor(names.kafkaTopicPrefix);
  console.log(`Kafka request/reply floor (12 partitions, 4 in flight, 10 s): ${floor.perSecond} round trips/s, p50 ${floor.p50.toFixed(2)} ms, p99 ${floor.p99.toFixed(2)} ms`);
  services.push(...await startSplitService(PORT, names.databaseUrl, 'latency', { PUBLIC_URL: BASE }, PROCESSES));
  const senders = await Promise.all(Array.from({ length: SENDERS }, (_, i) => signUp(`latency-${i}`)));

  const routes: Record<string, { path: string; prepare: Sender }> = {
    transfers: {
      path: '/v1/transfers',
      prepare: async () => {
        let i = 0;
        return () => {
          const sender = senders[i++ % SENDERS];
          const recipient = senders[(i + 3) % SENDERS];
          return postJson(PORT, '/v1/transfers', { recipient_email: recipient.email, amount: '0.01', currency: 'USD' }, sender.key);
        };
      },
    },
    'add-funds': {
      path: '/v1/payments/add-funds',
      prepare: async () => {
        // Linked now, with the processes that run the load (the rails of the cold start's first processes are gone).
        const customer = await postJson(PORT, '/v1/customers', { email: `bench-customer-${RUN_ID}-${randomUUID()}@example.com`, business_name: 'Bench Customer', country_code: 'DE' }, senders[0].key);
        await linkCustomer(BASE, senders[0].key, customer.body.id, 'openbank');
        const body = { customer_id: customer.body.id, partner: 'openbank', amount: '10.00', currency: 'USD' };
        return () => postJson(PORT, '/v1/payments/add-funds', body, senders[0].key);
      },
    },
    'fx-execute': {
      path: '/v1/fx/execute',
      prepare: async (rate) => {
        const pool = await quotes(senders[1].key, rate * (WARMUP_S + DURATION_S));
        await sleep(2_000); // let the quoting load settle before the measured one
        return () => {
          const id = pool.shift();
          return id ? postJson(PORT, '/v1/fx/execute', { quote_id: id }, senders[1].key) : null;
        };
      },
    },
  };

  const anatomy = await Anatomy.open(names.databaseUrl, names.kafkaTopicPrefix);
  const rows: Array<{ route: string; rate: number; result: OpenLoopResult }> = [];
  // Started cold: the service's processes start again, and the load begins the moment /readyz
  // says ready; its first COLD_S seconds are measured apart (issue target: p99 at most twice
  // the warmed p99).
  if (ROUTES.includes('transfers') && COLD_S > 0) {
    await stopServices(services);
    services.splice(0, services.length, ...await startSplitService(PORT, names.databaseUrl, 'latency', { PUBLIC_URL: BASE }, PROCESSES));
    const send = await routes.transfers.prepare(COLD_RATE);
    const cold = await openLoop(COLD_RATE, 0, COLD_S, services.map((s) => s.child.pid!), send);
    printOpenLoop('POST /v1/transfers, started cold', COLD_RATE, COLD_S, cold, services.map((s) => s.child.pid!));
    printBySecond(cold);
    rows.push({ route: '/v1/transfers (cold)', rate: COLD_RATE, result: cold });
  }
  const servicePids = services.map((s) => s.child.pid!);
  // One route at all its rates, then the next: what an overloaded step leaves behind (add-funds at
  // 200/s leaves payments for the settler to follow) then weighs only on its own route, run last.
  for (const name of ROUTES) {
    for (const rate of RATES) {
      const route = routes[name];
      const send = await route.prepare(rate);
      const before = await anatomy.snapshot(services);
      const result = await openLoop(rate, WARMUP_S, DURATION_S, servicePids, send);
      const after = await anatomy.snapshot(services);
      printOpenLoop(`POST ${route.path}`, rate, DURATION_S, result, servicePids);
      anatomy.print(`POST ${route.path} at ${rate}/s`, rate * (WARMUP_S + DURATION_S) - result.skipped, before, after);
      rows.push({ route: route.path, rate, result });
      if (result.statuses.size !== 1 || !result.statuses.has(201)) process.exitCode = 1;
      await sleep(1_000);
    }
  }
  await anatomy.close();
  console.log(`\nsummary (floor: Kafka p50 ${floor.p50.toFixed(1)} ms, p99 ${floor.p99.toFixed(1)} ms; target at 200/s: p50 ≤ 10 ms, p99 ≤ 30 ms)`);
  console.log('route                    | rate/s | p50 ms | p99 ms | max ms | non-201');
  for (const { route, rate, result } of rows) {
    const non201 = [...result.statuses].filter(([s]) => s !== 201).reduce((sum, [, n]) => sum + n, 0);
    const ms = (v: number) => v.toFixed(1).padStart(6);
    console.log(`${route.padEnd(24)} | ${String(rate).padStart(6)} | ${ms(percentile(result.latencies, 0.5))} | ${ms(percentile(result.latencies, 0.99))} | ${ms(result.latencies.at(-1) ?? NaN)} | ${non201}`);
  }
});
