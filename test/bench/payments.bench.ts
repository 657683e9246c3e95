// Add-funds benchmark: POST /v1/payments/add-funds at a steady rate (open loop: each request
// leaves at its scheduled time and its latency counts from that time, so a stall shows in the
// tail). Each request records the payment in the ledger, submits it to the openbank mock partner
// with the customer's link token and records the partner's answer: two ledger round trips and one
// partner call. The service runs as deployed (an api+notifier process, a consumers+rails process)
// on the real stack, in a database, topic prefix and Redis prefix of its own; the settler
// completes the payments in the background meanwhile.
//
//   npm run bench:payments
//
// Settings (environment): BENCH_RATE (50 requests/s), BENCH_DURATION_S (30), BENCH_WARMUP_S (5),
// BENCH_PORT (3300; the mock rails take the next port), and the stack addresses as in
// http.bench.ts.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { linkCustomer } from '../support/partner-links';
import { cpuBetween, cpuSnapshot, otherCpu, type CpuSnapshot } from './cpu';
import { benchNames, percentile, recreateDatabase, rssMiB, RUN_ID, sleep, startService, tearDown, waitReady, type BenchService } from './harness';

const env = process.env;
const RATE = Number(env.BENCH_RATE ?? 50);
const DURATION_S = Number(env.BENCH_DURATION_S ?? 30);
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 5);
const PORT = Number(env.BENCH_PORT ?? 3300);
const BASE = `http://127.0.0.1:${PORT}`;
const names = benchNames('payments');

async function post(path: string, body: unknown, key: string | null): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) Object.assign(headers, { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() });
  const response = await fetch(`${BASE}${path}`, { method: 'POST', body: JSON.stringify(body), headers });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function main(): Promise<void> {
  console.log(`add-funds benchmark: ${RATE} req/s for ${DURATION_S} s after ${WARMUP_S} s warm-up; service on :${PORT}, run ${RUN_ID}`);
  await recreateDatabase(names.databaseUrl);
  const services: BenchService[] = [];
  try {
    for (const roles of ['mock-rails,ledger,partners,request-logs', 'api,notifier']) {
      const http = roles.includes('api');
      const service = startService({
        port: PORT, roles, databaseUrl: names.databaseUrl,
        // The limiter is called, never reached; the API's callback is where the partner sends the browser back.
        extraEnv: { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', PUBLIC_URL: BASE, LOG_LEVEL: http ? 'warn' : 'info' },
      }, 'payments');
      services.push(service);
      await waitReady(service, http);
    }
    const servicePids = services.map((s) => s.child.pid!);
    const signUp = await post('/v1/sandbox/accounts', { email: `bench-pay-${RUN_ID}@example.com`, password: 'bench-password-1234', business_name: 'Bench Pay Ltd', country_code: 'GB' }, null);
    const key: string = signUp.body.api_key.key;
    const customer = await post('/v1/customers', { email: `bench-customer-${RUN_ID}@example.com`, business_name: 'Bench Customer', country_code: 'DE' }, key);
    await linkCustomer(BASE, key, customer.body.id, 'openbank');

    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    const inFlight: Promise<void>[] = [];
    const total = (WARMUP_S + DURATION_S) * RATE;
    const start = performance.now();
    let cpuAtStart: CpuSnapshot | null = null;
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / RATE;
      if (due > performance.now()) await sleep(due - performance.now());
      if (i === WARMUP_S * RATE) cpuAtStart = cpuSnapshot(servicePids);
      const measured = i >= WARMUP_S * RATE;
      inFlight.push(post('/v1/payments/add-funds', { customer_id: customer.body.id, partner: 'openbank', amount: '10.00', currency: 'USD' }, key).then((response) => {
        if (!measured) return;
        latencies.push(performance.now() - due);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }));
    }
    await Promise.all(inFlight);
    const cpu = cpuBetween(cpuAtStart ?? cpuSnapshot(servicePids), cpuSnapshot(servicePids), DURATION_S * 1000);
    latencies.sort((a, b) => a - b);
    const ms = (v: number) => v.toFixed(2);
    console.log(`\nPOST /v1/payments/add-funds at ${RATE}/s for ${DURATION_S} s: ${latencies.length} measured`);
    console.log(`  latency from scheduled send: p50 ${ms(percentile(latencies, 0.5))} ms, p99 ${ms(percentile(latencies, 0.99))} ms, max ${ms(latencies.at(-1) ?? NaN)} ms`);
    console.log(`  statuses: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}`);
    console.log(`  service RSS ${servicePids.reduce((sum, pid) => sum + rssMiB(pid), 0).toFixed(0)} MiB; CPU % of one core: service ${cpu.service.toFixed(0)}, postgres ${cpu.postgres.toFixed(0)}, redis ${cpu.redis.toFixed(0)}, JVMs ${cpu.jvm.toFixed(0)}, load generator ${cpu.loadGenerator.toFixed(0)}, other ${otherCpu(cpu).toFixed(0)} (host has ${os.cpus().length} cores)`);
    if (statuses.size !== 1 || !statuses.has(201)) process.exitCode = 1;
  } catch (error) {
    for (const service of services) console.error(service.output.slice(-40).join('\n'));
    throw error;
  } finally {
    await tearDown(services, names);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
