// A fresh, empty database for a test or benchmark run (only run databases may be dropped), and
// transactions that leave nothing behind.
import type { Knex } from 'knex';
import pg from 'pg';

export async function recreateDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  if (!/^payments_(test|bench)(_\d+)?(_w\d+)?$/.test(name)) throw new Error(`refusing to recreate "${name}": not a test or benchmark database`);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await dropDatabase(client, name);
    await client.query(`CREATE DATABASE ${name}`);
    // A test database's commits do not wait for the disk (about 2 ms each here): no test crashes
    // Postgres. The simulation's and the benchmarks' (payments_bench_*) keep every commit durable.
    if (name.startsWith('payments_test')) await client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  } finally {
    await client.end();
  }
}

/**
 * Drops a database, closing its connections first. An autovacuum worker busy in it (after a bulk
 * load) belongs to no role, so Postgres refuses to terminate it for a non-superuser (42501); it
 * gives way by itself within moments, so the drop is tried again, for up to 30 s.
 */
export async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      return;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if ((code !== '42501' && code !== '55006') || attempt >= 60) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Drops the database a URL names, connecting to the server's `postgres` database to do it. */
export async function dropDatabaseOf(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try { await dropDatabase(client, name); } finally { await client.end(); }
}

/** Runs `work` in a transaction of `db` that is always rolled back. */
export async function rolledBack<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const trx = await db.transaction();
  try {
    return await work(trx);
  } finally {
    await trx.rollback();
  }
}
