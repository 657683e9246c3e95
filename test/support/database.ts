// A fresh, empty database for a test or benchmark run. Only run databases may be dropped.
import pg from 'pg';

export async function recreateDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  if (!/^payments_(test|bench)(_\d+)?$/.test(name)) throw new Error(`refusing to recreate "${name}": not a test or benchmark database`);
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
