// What the benchmarks share: the service as a child process on the real stack (in a database,
// topic prefix and Redis prefix of its own), keep-alive HTTP, latency percentiles, clean-up.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createKafka } from '../../src/kafka/client';

import { recreateDatabase } from '../support/database';
import { deleteKeysStartingWith } from '../support/redis';
// Every process a run spawns shares one set of secrets (the rails' controls, the vaults).
import '../support/secrets';

export { recreateDatabase };

export const env = process.env;
export const RUN_ID = Math.floor(Date.now() / 1000); // seconds, as test runs name theirs (test/hooks.ts cleans up stale ones)
export const REDIS_URL = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const KAFKA_BROKERS = env.KAFKA_BROKERS ?? '127.0.0.1:9092';
export const SCHEMA_REGISTRY_URL = env.SCHEMA_REGISTRY_URL ?? 'http://127.0.0.1:8081/apis/ccompat/v7';
const READY_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;
const LOG_LINES_MAX = 200;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface BenchService {
  port: number;
  /** The roles it runs (ROLES). */
  roles: string;
  child: ChildProcess;
  output: string[];
  /** Set when the process logged that it started (the line may have left `output` since). */
  started: boolean;
}

export interface ServiceSettings {
  port: number;
  roles: string;
  databaseUrl: string;
  extraEnv?: Record<string, string>;
  /** Where every line the process writes is appended, across its restarts (the simulation's logs). */
  logFile?: string;
}

export const benchNames = (label: string) => ({
  databaseUrl: `${(env.DATABASE_URL ?? 'postgres://payments:payments@127.0.0.1:5432/payments').replace(/\/[^/]*$/, '')}/payments_bench_${RUN_ID}`,
  redisKeyPrefix: `bench:${RUN_ID}:${label}:`,
  kafkaTopicPrefix: `bench.${RUN_ID}.`,
});

export function startService(settings: ServiceSettings, label: string): BenchService {
  const names = benchNames(label);
  const main = path.join(__dirname, '..', '..', 'src', 'main.js');
  // BENCH_CPU_PROF_DIR: the service writes a V8 CPU profile there when it exits.
  // The node flags of `npm start` (scripts/start.sh), so the benchmark measures what runs.
  const nodeArgs = ['--max-semi-space-size=16', ...(env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${env.BENCH_CPU_PROF_DIR}`] : [])];
  const child = spawn(process.execPath, [...nodeArgs, main], {
    env: {
      ...env,
      PORT: String(settings.port), ROLES: settings.roles, DATABASE_URL: settings.databaseUrl, REDIS_URL,
      REDIS_KEY_PREFIX: names.redisKeyPrefix, KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: names.kafkaTopicPrefix, SCHEMA_REGISTRY_URL,
      MOCK_RAILS_PORT: String(settings.port + 1), MOCK_RAILS_URL: `http://127.0.0.1:${settings.port + 1}`,
      LOG_LEVEL: 'warn', KAFKAJS_NO_PARTITIONER_WARNING: '1',
      ...settings.extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const service: BenchService = { port: settings.port, roles: settings.roles, child, output, started: false };
  const keep = (chunk: Buffer) => {
    const lines = chunk.toString('utf8').split('\n').filter(Boolean);
    if (lines.some((line) => line.includes('"msg":"service started"'))) service.started = true;
    output.push(...lines);
    if (output.length > LOG_LINES_MAX) output.splice(0, output.length - LOG_LINES_MAX);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  if (settings.logFile) {
    const file = fs.createWriteStream(settings.logFile, { flags: 'a' });
    child.stdout!.pipe(file, { end: false });
    child.stderr!.pipe(file, { end: false });
    child.once('exit', () => file.end());
  }
  if (env.BENCH_SERVICE_STDERR) child.stderr!.pipe(process.stderr); // to watch a run's diagnostics
  return service;
}

/** Waits for /readyz, or (for a process without the api role) for its start log line. */
export async function waitReady(service: BenchService, http = true, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) throw new Error(`the service exited with code ${service.child.exitCode}: ${service.output.slice(-20).join('\n')}`);
    if (!http && service.started) return;
    if (http) {
      try {
        if ((await fetch(`http://127.0.0.1:${service.port}/readyz`)).status === 200) return;
      } catch { /* not listening yet */ }
    }
    await sleep(200);
  }
  throw new Error(`the service (${service.roles}) was not ready after ${timeoutMs} ms`);
}

export async function stopService(service: BenchService): Promise<void> {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

export function rssMiB(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = /VmRSS:\s+(\d+)/.exec(status)?.[1];
    return kib ? Math.round(Number.parseInt(kib, 10) / 1024) : 0;
  } catch {
    return 0;
  }
}

export function percentile(sorted: number[], share: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
}

export interface JsonAnswer { status: number; body: any }

/** One JSON request on a keep-alive agent; resolves with status and parsed body. */
export function request(agent: http.Agent, port: number, method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method, path: urlPath, agent, timeout: 10_000,
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: any = text;
        try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

export async function cleanUpRedisKeys(prefix: string): Promise<void> {
  await deleteKeysStartingWith(REDIS_URL, prefix);
}

/** Removes what a run left in Kafka and the registry (the bench database stays for inspection). */
export async function cleanUpTopics(prefix: string): Promise<void> {
  const admin = createKafka(KAFKA_BROKERS.split(','), 'bench-cleanup').admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
    for (const topic of topics) {
      await fetch(`${SCHEMA_REGISTRY_URL}/subjects/${encodeURIComponent(`${topic}-value`)}`, { method: 'DELETE' }).catch(() => undefined);
    }
  } finally {
    await admin.disconnect();
  }
}

/** Stops the run's services (the last started first) and removes its topics and Redis keys. */
export async function tearDown(services: BenchService[], names: ReturnType<typeof benchNames>): Promise<void> {
  for (const service of [...services].reverse()) await stopService(service);
  await Promise.all([cleanUpTopics(names.kafkaTopicPrefix), cleanUpRedisKeys(names.redisKeyPrefix)])
    .catch((error) => console.error(`clean-up failed: ${(error as Error).message}`));
}

/**
 * Runs a benchmark's `body` in a database of its own, with the services it starts (it adds them
 * to `services`): on failure their last output is printed, and either way they are stopped and
 * the run's topics and Redis keys removed. A failure ends the process with exit code 1.
 */
export function runBench(names: ReturnType<typeof benchNames>, body: (services: BenchService[]) => Promise<void>): void {
  const services: BenchService[] = [];
  (async () => {
    await recreateDatabase(names.databaseUrl);
    try {
      await body(services);
    } catch (error) {
      for (const service of services) console.error(service.output.slice(-40).join('\n'));
      throw error;
    } finally {
      await tearDown(services, names);
    }
  })().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
