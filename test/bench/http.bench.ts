// HTTP benchmark of the request contract: the service runs as child processes on the real
// stack, by default as deployed (docker-compose.yml): one process for api+notifier and one for
// the consumers (ledger, partners, request-logs) and the mock rails, in a database, topic prefix
// and Redis prefix of their own. This process drives closed-loop load over keep-alive
// connections and prints one row per scenario.
//
//   npm run bench:http
//
// Settings (environment): BENCH_DURATION_S (10), BENCH_WARMUP_S (2), BENCH_CONNECTIONS
// ("32,128"), BENCH_SCENARIOS ("get-account,create-customer"; also "healthz", a calibration of
// the bare HTTP stack), BENCH_PORT (3100; the mock rails take the next port),
// BENCH_CPU_PROF_DIR (when set, each service process writes a V8 CPU profile there on exit),
// BENCH_SPLIT (1; 0 runs all roles in one process), and the
// stack addresses DATABASE_URL (its database is replaced by payments_bench_<run>), REDIS_URL,
// KAFKA_BROKERS, SCHEMA_REGISTRY_URL.
// Target (issue): ≥ 3,000 authenticated GETs/s with p99 ≤ 20 ms at 32 connections.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import {
  benchNames, rssMiB, RUN_ID, runBench, sleep, startService, waitReady,
} from './harness';
import { cpuBetween, cpuSnapshot, otherCpu, type CpuShares, type CpuSnapshot } from './cpu';
import { encodeRequest, RawHttpConnection } from './raw-http';

const env = process.env;
const DURATION_S = Number(env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 2);
const CONNECTIONS = (env.BENCH_CONNECTIONS ?? '32,128').split(',').map(Number);
const SCENARIO_NAMES = (env.BENCH_SCENARIOS ?? 'get-account,create-customer').split(',');
const PORT = Number(env.BENCH_PORT ?? 3100);
const names = benchNames('http');
const REQUEST_TIMEOUT_MS = 10_000;
const IDLE_SAMPLE_MS = 3_000;

interface Scenario { name: string; /** The bytes of the next request (encodeRequest). */ next(): Buffer }
interface Result {
  scenario: string; connections: number; requests: number; perSecond: number;
  p50Ms: number; p99Ms: number; maxMs: number; non2xx: number; errors: number; rssMiB: number;
  /** CPU used in the measured window, in % of one core, by group (see cpuSnapshot). */
  cpu: CpuShares;
}

async function json(method: 'GET' | 'POST', urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${PORT}${urlPath}`, {
    method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Closed loop: `connections` workers, each sending its next request when the last one answered. */
async function drive(scenario: Scenario, connections: number, servicePids: number[]): Promise<Result> {
  const latenciesMs: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const measureFrom = performance.now() + WARMUP_S * 1000;
  const stopAt = measureFrom + DURATION_S * 1000;
  let cpuAtStart: CpuSnapshot | null = null;
  const cpuMark = setTimeout(() => { cpuAtStart = cpuSnapshot(servicePids); }, WARMUP_S * 1000);

  const worker = async () => {
    const connection = new RawHttpConnection(PORT, REQUEST_TIMEOUT_MS);
    while (performance.now() < stopAt) {
      const request = scenario.next();
      const started = performance.now();
      let status = 0;
      try {
        status = (await connection.send(request)).status;
      } catch {
        status = -1;
      }
      if (started < measureFrom) continue;
      latenciesMs.push(performance.now() - started);
      if (status === -1) errors++;
      else if (status < 200 || status > 299) non2xx++;
    }
    connection.close();
  };
  await Promise.all(Array.from({ length: connections }, worker));
  clearTimeout(cpuMark);
  const cpu = cpuBetween(cpuAtStart ?? cpuSnapshot(servicePids), cpuSnapshot(servicePids), DURATION_S * 1000);

  latenciesMs.sort((a, b) => a - b);
  const at = (q: number) => latenciesMs[Math.min(latenciesMs.length - 1, Math.floor(q * latenciesMs.length))] ?? NaN;
  return {
    scenario: scenario.name, connections, requests: latenciesMs.length, perSecond: latenciesMs.length / DURATION_S,
    p50Ms: at(0.5), p99Ms: at(0.99), maxMs: latenciesMs[latenciesMs.length - 1] ?? NaN, non2xx, errors,
    rssMiB: servicePids.reduce((sum, pid) => sum + rssMiB(pid), 0), cpu,
  };
}

function scenarios(secretKey: string): Scenario[] {
  const auth = { authorization: `Bearer ${secretKey}` };
  let sequence = 0;
  const healthz = encodeRequest('GET', '/healthz', {});
  const getAccount = encodeRequest('GET', '/v1/accounts/me', auth);
  const all: Scenario[] = [
    // Calibration: the HTTP stack and the rate limiter's Redis call only (no credential, no log).
    { name: 'healthz', next: () => healthz },
    { name: 'get-account', next: () => getAccount },
    {
      name: 'create-customer',
      next: () => {
        const body = JSON.stringify({ email: `bench-${RUN_ID}-${sequence++}@example.com`, business_name: 'Bench Ltd', country_code: 'GB' });
        return encodeRequest('POST', '/v1/customers', { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() }, body);
      },
    },
  ];
  return all.filter((s) => SCENARIO_NAMES.includes(s.name));
}

function printTable(results: Result[]): void {
  const header = ['scenario', 'connections', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'service RSS MiB',
    'CPU %: service', 'load gen', 'postgres', 'redis', 'JVMs', 'other', 'service CPU ms/req'];
  const rows = results.map((r) => [
    r.scenario, String(r.connections), String(r.requests), r.perSecond.toFixed(0), r.p50Ms.toFixed(2), r.p99Ms.toFixed(2), r.maxMs.toFixed(1),
    String(r.non2xx), String(r.errors), r.rssMiB.toFixed(0),
    r.cpu.service.toFixed(0), r.cpu.loadGenerator.toFixed(0), r.cpu.postgres.toFixed(0), r.cpu.redis.toFixed(0), r.cpu.jvm.toFixed(0),
    otherCpu(r.cpu).toFixed(0),
    ((r.cpu.service * 10 * DURATION_S) / Math.max(1, r.requests)).toFixed(3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
  console.log(`(CPU in % of one core over the measured window; this host has ${os.cpus().length} cores. "other" is work on the host outside the service, this load generator and the stack.)`);
}

runBench(names, async (services) => {
  console.log(`HTTP benchmark: ${DURATION_S} s per scenario after ${WARMUP_S} s warm-up; service on :${PORT}, run ${RUN_ID}`);
  const groups = env.BENCH_SPLIT === '0' ? ['all'] : ['mock-rails,ledger,partners,request-logs', 'api,notifier'];
  const results: Result[] = [];
  for (const roles of groups) {
    const http = roles.includes('api') || roles === 'all';
    const service = startService({
      port: PORT, roles, databaseUrl: names.databaseUrl,
      extraEnv: {
        RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', // on, so its Redis call is measured, but never reached
        LOG_LEVEL: http ? 'warn' : 'info', // a process without HTTP is ready when it logs its start
      },
    }, 'http');
    services.push(service);
    await waitReady(service, http);
  }
  const servicePids = services.map((s) => s.child.pid!);
  console.log(`service processes: ${groups.join(' | ')}`);
  // What the service burns with no requests at all (consumer polls, timers of every role).
  const idleStart = cpuSnapshot(servicePids);
  await sleep(IDLE_SAMPLE_MS);
  const idle = cpuBetween(idleStart, cpuSnapshot(servicePids), IDLE_SAMPLE_MS);
  console.log(`service idle: ${idle.service.toFixed(0)} % of a core; stack idle: postgres ${idle.postgres.toFixed(0)} %, redis ${idle.redis.toFixed(0)} %, JVMs ${idle.jvm.toFixed(0)} %; other work on the host ${otherCpu(idle).toFixed(0)} %`);
  const signUp = await json('POST', '/v1/sandbox/accounts', { email: `bench-${RUN_ID}@example.com`, password: 'bench-password-1234', business_name: 'Bench Ltd', country_code: 'GB' });
  if (signUp.status !== 201) throw new Error(`sign-up failed: ${signUp.status} ${JSON.stringify(signUp.body)}`);
  for (const scenario of scenarios(signUp.body.api_key.key)) {
    for (const connections of CONNECTIONS) {
      const result = await drive(scenario, connections, servicePids);
      results.push(result);
      console.log(`  ${result.scenario} × ${connections}: ${result.perSecond.toFixed(0)} req/s, p99 ${result.p99Ms.toFixed(2)} ms`);
    }
  }
  console.log();
  printTable(results);
  const target = results.find((r) => r.scenario === 'get-account' && r.connections === 32);
  if (target) {
    const met = target.perSecond >= 3000 && target.p99Ms <= 20 && target.non2xx === 0 && target.errors === 0;
    console.log(`\ntarget (GET /v1/accounts/me, 32 connections: ≥ 3000 req/s, p99 ≤ 20 ms): ${met ? 'met' : 'MISSED'}`);
  }
});

