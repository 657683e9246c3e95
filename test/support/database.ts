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
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
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
