// Root hooks: one service for the whole run, started against the real stack in the test
// namespace (scripts/test.sh), and a clean test database each run.
import pg from 'pg';
import { createKafka } from '../src/kafka/client';
import { startService, type TestService } from './support/service';

let service: TestService | null = null;

export function testService(): TestService {
  if (!service) throw new Error('the test service is not running (run the tests through npm test)');
  return service;
}

async function recreateDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
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

/** Deletes the topics earlier test runs left behind, so the broker does not fill up. */
async function deleteOldTestTopics(brokers: string[], currentPrefix: string): Promise<void> {
  const admin = createKafka(brokers, 'test-cleanup').admin();
  await admin.connect();
  try {
    const stale = (await admin.listTopics()).filter((t) => t.startsWith('test.') && !t.startsWith(currentPrefix));
    if (stale.length > 0) await admin.deleteTopics({ topics: stale, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    const databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl || !databaseUrl.endsWith('_test')) throw new Error('DATABASE_URL must name a *_test database (run the tests through npm test)');
    await recreateDatabase(databaseUrl);
    await deleteOldTestTopics((process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), process.env.KAFKA_TOPIC_PREFIX ?? 'test.');
    service = await startService();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await service?.stop();
  },
};
