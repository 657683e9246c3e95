// Root hooks: one service per test process, started against the real stack in the test
// namespace (scripts/test.sh), and a clean test database. The whole suite runs its files in
// parallel worker processes (scripts/test.sh): each worker is a run of its own, with its own
// database, topics and Redis prefix, and one service that its files share.
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import pg from 'pg';
// First: the secrets this test process and every process it spawns share.
import './support/secrets';
import { createKafka } from '../src/kafka/client';
import { dropDatabase, recreateDatabase } from './support/database';
import { startService, type TestService } from './support/service';

// Set as this module loads, before any test file reads them (some do, as they load).
const workerId = process.env.MOCHA_WORKER_ID;
if (workerId !== undefined) {
  process.env.DATABASE_URL = `${process.env.DATABASE_URL}_w${workerId}`;
  process.env.KAFKA_TOPIC_PREFIX = `${process.env.KAFKA_TOPIC_PREFIX}w${workerId}.`;
  process.env.REDIS_KEY_PREFIX = `${process.env.REDIS_KEY_PREFIX}w${workerId}:`;
}

let service: TestService | null = null;

export function testService(): TestService {
  if (!service) throw new Error('the test service is not running (run the tests through npm test)');
  return service;
}

/** The shared service's database, for tests that arrange or read rows directly. */
export const db = (): Knex => testService().runtime.db;

/** Where the shared service's mock rails listen. */
export const railsUrl = (): string => testService().roles.find((r) => r.role === 'mock-rails')!.url!;

// Runs are named test.<unix seconds>. (topics) and payments_test_<unix seconds> (databases);
// a run deletes its own topics when it ends (each topic adds to the broker's restart time), and
// what earlier runs left behind is removed once it is old enough not to belong to a run that is
// still going on this machine. The databases stay until then, for reading after a failure.
const STALE_AFTER_SECONDS = 2 * 60 * 60;
const isStale = (runSeconds: string | undefined) => runSeconds !== undefined && Date.now() / 1000 - Number.parseInt(runSeconds, 10) > STALE_AFTER_SECONDS;

async function deleteTestTopics(brokers: string[], which: (topic: string) => boolean): Promise<void> {
  const admin = createKafka(brokers, 'test-cleanup').admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter(which);
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}
const brokers = () => (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');

async function dropOldTestDatabases(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT datname FROM pg_database WHERE datname ~ '^payments_(test|bench)_[0-9]+(_[a-z0-9_]+)?$'`);
    for (const { datname } of rows) {
      if (isStale(/^payments_(?:test|bench)_(\d+)/.exec(datname)?.[1])) await dropDatabase(client, datname);
    }
  } finally {
    await client.end();
  }
}

/** Once per run, in the main process: what earlier runs left behind goes. */
export async function mochaGlobalSetup(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl || !/\/payments_test(_\d+)?$/.test(databaseUrl)) throw new Error('DATABASE_URL must name a payments_test database (run the tests through npm test)');
  await dropOldTestDatabases(databaseUrl);
  await deleteTestTopics(brokers(), (topic) => isStale(/^(?:test|bench)\.(\d+)\./.exec(topic)?.[1]));
}

/** Once per run, in the main process, after every test: the run's topics (every worker's) go. */
export async function mochaGlobalTeardown(): Promise<void> {
  const prefix = process.env.KAFKA_TOPIC_PREFIX;
  if (prefix) await deleteTestTopics(brokers(), (topic) => topic.startsWith(prefix));
}

// Each file's time, from its first hook to its last (the first file of a worker includes the
// start of the worker's service), when it ended, in which worker, the CPU its worker spent
// meanwhile (the file's tests and the worker's service), and the CPU of the processes it spawned
// that ended meanwhile (browsers, generators, CLI runs, services of their own), for
// scripts/test.sh to print the slowest files, the costliest, and when each worker ran out of files.
let fileStartedAt = 0;
let fileCpuAt = process.cpuUsage();
let fileChildrenCpuAt = 0;

/** CPU milliseconds of this process's children that ended and were waited for (Linux; 0 elsewhere). */
function endedChildrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // cutime and cstime, the 16th and 17th fields, in USER_HZ (100 a second on Linux).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}

function recordFileTime(context: Mocha.Context): void {
  const file = context.test?.parent?.suites.find((suite) => suite.file)?.file;
  const times = process.env.TEST_TIMES_FILE;
  if (!file || !times) return;
  const cpu = process.cpuUsage(fileCpuAt);
  const cpuMs = Math.round((cpu.user + cpu.system) / 1000);
  const childrenMs = endedChildrenCpuMs() - fileChildrenCpuAt;
  appendFileSync(times, `${Date.now() - fileStartedAt}\t${path.relative(process.cwd(), file)}\t${Date.now()}\t${workerId ?? 0}\t${cpuMs}\t${childrenMs}\n`);
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    fileStartedAt = Date.now();
    fileCpuAt = process.cpuUsage();
    fileChildrenCpuAt = endedChildrenCpuMs();
    if (service) return; // a worker's later files share its service
    this.timeout(120_000);
    await recreateDatabase(process.env.DATABASE_URL!);
    service = await startService();
  },
  async afterAll(this: Mocha.Context) {
    recordFileTime(this);
    // A worker runs this after each of its files; its service stays for the next, and ends with it.
    if (workerId !== undefined) return;
    this.timeout(60_000);
    await service?.stop();
    service = null;
  },
};
