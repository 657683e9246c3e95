// Root hooks: one service for the whole run, started against the real stack in the test
// namespace (scripts/test.sh), and a clean test database each run.
import pg from 'pg';
import { createKafka } from '../src/kafka/client';
import { recreateDatabase } from './support/database';
import { startService, type TestService } from './support/service';

let service: TestService | null = null;

export function testService(): TestService {
  if (!service) throw new Error('the test service is not running (run the tests through npm test)');
  return service;
}

// Runs are named test.<unix seconds>. (topics) and payments_test_<unix seconds> (databases);
// what earlier runs left behind is removed once it is old enough not to belong to a run that
// is still going on this machine.
const STALE_AFTER_SECONDS = 2 * 60 * 60;
const isStale = (runSeconds: string | undefined) => runSeconds !== undefined && Date.now() / 1000 - Number.parseInt(runSeconds, 10) > STALE_AFTER_SECONDS;

async function deleteOldTestTopics(brokers: string[]): Promise<void> {
  const admin = createKafka(brokers, 'test-cleanup').admin();
  await admin.connect();
  try {
    const stale = (await admin.listTopics()).filter((t) => isStale(/^(?:test|bench)\.(\d+)\./.exec(t)?.[1]));
    if (stale.length > 0) await admin.deleteTopics({ topics: stale, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

async function dropOldTestDatabases(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT datname FROM pg_database WHERE datname ~ '^payments_(test|bench)_[0-9]+(_migrations)?$'`);
    for (const { datname } of rows) {
      if (isStale(/_(\d+)(?:_migrations)?$/.exec(datname)?.[1])) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  } finally {
    await client.end();
  }
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    const databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl || !/\/payments_test(_\d+)?$/.test(databaseUrl)) throw new Error('DATABASE_URL must name a payments_test database (run the tests through npm test)');
    await recreateDatabase(databaseUrl);
    await dropOldTestDatabases(databaseUrl);
    await deleteOldTestTopics((process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','));
    service = await startService();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await service?.stop();
  },
};
