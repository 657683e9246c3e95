// HTTP benchmark of the request contract: the service runs as a child process (all roles) on
// the real stack, in a database, topic prefix and Redis prefix of its own; this process drives
// closed-loop load over keep-alive connections and prints one row per scenario.
//
//   npm run build && node dist/test/bench/http.bench.js
//
// Settings (environment): BENCH_DURATION_S (10), BENCH_WARMUP_S (2), BENCH_CONNECTIONS
// ("32,128"), BENCH_SCENARIOS ("get-account,create-customer"; also "healthz", a calibration of
// the bare HTTP stack), BENCH_PORT (3100; the mock rails take the next port),
// BENCH_DATABASE_URL (postgres://payments:payments@127.0.0.1:5432/payments_bench),
// BENCH_CPU_PROF_DIR (when set, the service writes a V8 CPU profile there on exit), BENCH_ROLES
// (all; "api" leaves the request-log writer out, to measure its share), and the
// stack addresses REDIS_URL, KAFKA_BROKERS, SCHEMA_REGISTRY_URL.
// Target (issue): ≥ 3,000 authenticated GETs/s with p99 ≤ 20 ms at 32 connections.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import pg from 'pg';
import { createKafka } from '../../src/kafka/client';

const env = process.env;
const DURATION_S = Number(env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 2);
const CONNECTIONS = (env.BENCH_CONNECTIONS ?? '32,128').split(',').map(Number);
const SCENARIO_NAMES = (env.BENCH_SCENARIOS ?? 'get-account,create-customer').split(',');
const PORT = Number(env.BENCH_PORT ?? 3100);
const MOCK_RAILS_PORT = PORT + 1; // the mock partner rails (a role of ROLES=all) must not collide with a development server
const DATABASE_URL = env.BENCH_DATABASE_URL ?? 'postgres://payments:payments@127.0.0.1:5432/payments_bench';
const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const KAFKA_BROKERS = env.KAFKA_BROKERS ?? '127.0.0.1:9092';
const SCHEMA_REGISTRY_URL = env.SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8081/apis/ccompat/v7';
const RUN_ID = Math.floor(Date.now() / 1000); // seconds, as test runs name theirs (test/hooks.ts cleans up stale ones)
const REDIS_KEY_PREFIX = `bench:${RUN_ID}:`;
const KAFKA_TOPIC_PREFIX = `bench.${RUN_ID}.`;
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 10_000;
const LOG_LINES_MAX = 200;
const IDLE_SAMPLE_MS = 3_000;

interface Request { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string }
interface Scenario { name: string; next(): Request }
interface Result {
  scenario: string; connections: number; requests: number; perSecond: number;
  p50Ms: number; p99Ms: number; maxMs: number; non2xx: number; errors: number; rssMiB: number;
  /** CPU used in the measured window, in % of one core, by group (see cpuSnapshot). */
  cpu: CpuShares;
}
type CpuGroup = 'service' | 'loadGenerator' | 'postgres' | 'redis' | 'jvm' | 'host';
type CpuShares = Record<CpuGroup, number>;
interface CpuSnapshot { processes: Map<string, { group: CpuGroup; ms: number }>; hostMs: number }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function send(agent: http.Agent, request: Request): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: PORT, method: request.method, path: request.path, headers: request.headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      res.on('error', reject);
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.resume();
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(request.body);
  });
}

async function json(method: 'GET' | 'POST', urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${PORT}${urlPath}`, {
    method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Closed loop: `connections` workers, each sending its next request when the last one answered. */
async function drive(scenario: Scenario, connections: number, child: ChildProcess): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  const latenciesMs: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const measureFrom = performance.now() + WARMUP_S * 1000;
  const stopAt = measureFrom + DURATION_S * 1000;
  let cpuAtStart: CpuSnapshot | null = null;
  const cpuMark = setTimeout(() => { cpuAtStart = cpuSnapshot(child.pid!); }, WARMUP_S * 1000);

  const worker = async () => {
    while (performance.now() < stopAt) {
      const request = scenario.next();
      const started = performance.now();
      let status = 0;
      try {
        status = await send(agent, request);
      } catch {
        status = -1;
      }
      if (started < measureFrom) continue;
      latenciesMs.push(performance.now() - started);
      if (status === -1) errors++;
      else if (status < 200 || status > 299) non2xx++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  clearTimeout(cpuMark);
  const cpu = cpuBetween(cpuAtStart ?? cpuSnapshot(child.pid!), cpuSnapshot(child.pid!), DURATION_S * 1000);
  agent.destroy();

  latenciesMs.sort((a, b) => a - b);
  const at = (q: number) => latenciesMs[Math.min(latenciesMs.length - 1, Math.floor(q * latenciesMs.length))] ?? NaN;
  return {
    scenario: scenario.name, connections, requests: latenciesMs.length, perSecond: latenciesMs.length / DURATION_S,
    p50Ms: at(0.5), p99Ms: at(0.99), maxMs: latenciesMs[latenciesMs.length - 1] ?? NaN, non2xx, errors,
    rssMiB: rssMiB(child.pid!), cpu,
  };
}

function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** User plus system CPU time of a process so far, in ms (from /proc/<pid>/stat); 0 if it is gone. */
function processCpuMs(pid: number | string): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND) * 1000;
  } catch {
    return 0;
  }
}

/**
 * CPU time so far (ms) of the service, this load generator, the stack (Postgres backends, Redis,
 * the JVMs of Kafka and the registry) and the whole host (busy time of all cores, from
 * /proc/stat): the host minus the rest is what other work on the machine took.
 */
function cpuSnapshot(servicePid: number): CpuSnapshot {
  const processes = new Map<string, { group: CpuGroup; ms: number }>();
  processes.set(String(servicePid), { group: 'service', ms: processCpuMs(servicePid) });
  processes.set(String(process.pid), { group: 'loadGenerator', ms: processCpuMs(process.pid) });
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let comm = '';
    try { comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { continue; }
    const group: CpuGroup | null = comm === 'postgres' ? 'postgres' : comm === 'redis-server' ? 'redis' : comm === 'java' ? 'jvm' : null;
    if (group) processes.set(pid, { group, ms: processCpuMs(pid) });
  }
  const [user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { processes, hostMs: ((user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND) * 1000 };
}

/** CPU per group between two snapshots; a process that started in between counts from zero. */
function cpuBetween(start: CpuSnapshot, end: CpuSnapshot, windowMs: number): CpuShares {
  const shares: CpuShares = { service: 0, loadGenerator: 0, postgres: 0, redis: 0, jvm: 0, host: 0 };
  for (const [pid, { group, ms }] of end.processes) shares[group] += ms - (start.processes.get(pid)?.ms ?? 0);
  shares.host = end.hostMs - start.hostMs;
  for (const group of Object.keys(shares) as CpuGroup[]) shares[group] = (shares[group] / windowMs) * 100;
  return shares;
}

async function recreateDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*bench[a-z0-9_]*$/.test(name)) throw new Error(`refusing to recreate "${name}": the bench database name must contain "bench"`);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

function startService(): { child: ChildProcess; output: string[] } {
  const main = path.join(__dirname, '..', '..', 'src', 'main.js');
  const nodeArgs = env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${env.BENCH_CPU_PROF_DIR}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, main], {
    env: {
      ...env,
      PORT: String(PORT), ROLES: env.BENCH_ROLES ?? 'all', DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX, KAFKA_BROKERS, KAFKA_TOPIC_PREFIX, SCHEMA_REGISTRY_URL,
      MOCK_RAILS_PORT: String(MOCK_RAILS_PORT), MOCK_RAILS_URL: `http://127.0.0.1:${MOCK_RAILS_PORT}`,
      RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', // on, so its Redis call is measured, but never reached
      LOG_LEVEL: 'warn', KAFKAJS_NO_PARTITIONER_WARNING: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (output.length > LOG_LINES_MAX) output.splice(0, output.length - LOG_LINES_MAX);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output };
}

async function waitReady(child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode} before it was ready`);
    try {
      if ((await json('GET', '/readyz')).status === 200) return;
    } catch { /* not listening yet */ }
    await sleep(200);
  }
  throw new Error(`the service was not ready after ${READY_TIMEOUT_MS} ms`);
}

async function stopService(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** Removes what this run left in Kafka, the registry and Redis (the bench database stays for inspection). */
async function cleanUp(): Promise<void> {
  const admin = createKafka(KAFKA_BROKERS.split(','), 'bench-cleanup').admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(KAFKA_TOPIC_PREFIX));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
    for (const topic of topics) {
      await fetch(`${SCHEMA_REGISTRY_URL}/subjects/${encodeURIComponent(`${topic}-value`)}`, { method: 'DELETE' }).catch(() => undefined);
    }
  } finally {
    await admin.disconnect();
  }
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${REDIS_KEY_PREFIX}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

function scenarios(secretKey: string): Scenario[] {
  const auth = { authorization: `Bearer ${secretKey}` };
  let sequence = 0;
  const all: Scenario[] = [
    // Calibration: the HTTP stack and the rate limiter's Redis call only (no credential, no log).
    { name: 'healthz', next: () => ({ method: 'GET', path: '/healthz', headers: {} }) },
    { name: 'get-account', next: () => ({ method: 'GET', path: '/v1/accounts/me', headers: auth }) },
    {
      name: 'create-customer',
      next: () => {
        const body = JSON.stringify({ email: `bench-${RUN_ID}-${sequence++}@example.com`, business_name: 'Bench Ltd', country_code: 'GB' });
        return {
          method: 'POST', path: '/v1/customers', body,
          headers: { ...auth, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'idempotency-key': randomUUID() },
        };
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
    Math.max(0, r.cpu.host - r.cpu.service - r.cpu.loadGenerator - r.cpu.postgres - r.cpu.redis - r.cpu.jvm).toFixed(0),
    ((r.cpu.service * 10 * DURATION_S) / Math.max(1, r.requests)).toFixed(3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
  console.log(`(CPU in % of one core over the measured window; this host has ${os.cpus().length} cores. "other" is work on the host outside the service, this load generator and the stack.)`);
}

async function main(): Promise<void> {
  console.log(`HTTP benchmark: ${DURATION_S} s per scenario after ${WARMUP_S} s warm-up; service on :${PORT}, run ${RUN_ID}`);
  await recreateDatabase(DATABASE_URL);
  const { child, output } = startService();
  const results: Result[] = [];
  try {
    await waitReady(child);
    // What the service burns with no requests at all (consumer polls, timers of every role).
    const idleStart = cpuSnapshot(child.pid!);
    await sleep(IDLE_SAMPLE_MS);
    const idle = cpuBetween(idleStart, cpuSnapshot(child.pid!), IDLE_SAMPLE_MS);
    console.log(`service idle: ${idle.service.toFixed(0)} % of a core; stack idle: postgres ${idle.postgres.toFixed(0)} %, redis ${idle.redis.toFixed(0)} %, JVMs ${idle.jvm.toFixed(0)} %; other work on the host ${Math.max(0, idle.host - idle.service - idle.loadGenerator - idle.postgres - idle.redis - idle.jvm).toFixed(0)} %`);
    const signUp = await json('POST', '/v1/sandbox/accounts', { email: `bench-${RUN_ID}@example.com`, password: 'bench-password-1234', business_name: 'Bench Ltd', country_code: 'GB' });
    if (signUp.status !== 201) throw new Error(`sign-up failed: ${signUp.status} ${JSON.stringify(signUp.body)}`);
    for (const scenario of scenarios(signUp.body.api_key.key)) {
      for (const connections of CONNECTIONS) {
        const result = await drive(scenario, connections, child);
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
  } catch (error) {
    console.error(output.slice(-40).join('\n'));
    throw error;
  } finally {
    await stopService(child);
    await cleanUp().catch((error) => console.error(`clean-up failed: ${(error as Error).message}`));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
