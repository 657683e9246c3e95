// Postgres access through knex. Only the store modules use it directly.
import path from 'node:path';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { log } from '../log';

// Postgres returns NUMERIC and BIGINT as text; keep them text so no amount ever passes through a
// JS float. Money is parsed by the money module (ledger/money.ts).
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export type Db = Knex;

/** The longest any one query may take before the caller gets an error (a 503 for a request). */
const QUERY_TIMEOUT_MS = 30_000;

/**
 * The longest a statement of a bulk job may take. A reconciliation's statements grow with the days
 * it covers: over 31 busy days (3.1 million movements) one pass took longer than QUERY_TIMEOUT_MS.
 */
const BULK_QUERY_TIMEOUT_MS = 600_000;

/** A raw statement of a bulk job, allowed BULK_QUERY_TIMEOUT_MS rather than the pool's timeout. */
export function bulkRaw(db: Knex, sql: string, bindings: readonly Knex.RawBinding[] | Knex.ValueDict = []): Knex.Raw {
  return db.raw(sql, bindings).options({ query_timeout: BULK_QUERY_TIMEOUT_MS });
}

/** `sessionOptions`: settings of every session of the pool, as `-c name=value` (e.g. `-c jit=off`). */
export function createDb(databaseUrl: string, poolMax = 10, poolMin = 0, sessionOptions?: string): Db {
  return knex({
    client: 'pg',
    // Bounded waits, so a request meets a Postgres that is away with a 503 within seconds
    // (src/http/unavailable.ts) rather than hang: connecting, acquiring, and any one query.
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: 3_000, query_timeout: QUERY_TIMEOUT_MS, options: sessionOptions },
    pool: {
      min: poolMin,
      max: poolMax,
      // A connection whose query the client stopped waiting for (query_timeout) is left mid-exchange
      // by node-postgres: its next statements queue behind an answer that may never come (one lost
      // with a broken link), and on the server its transaction stays open, locks held. Only a
      // connection ready for a statement is handed out again; another is closed by the pool, which
      // ends its session and its transaction on the server.
      validate: (connection: pg.Client & { readyForQuery?: boolean }) => connection.readyForQuery === true,
    },
    acquireConnectionTimeout: 5_000,
    // knex writes its own warnings to the console; they belong in the service's log.
    log: {
      warn: (message: unknown) => log.warn({ knex: String(message) }, 'knex warning'),
      error: (message: unknown) => log.debug({ knex: String(message) }, 'knex error (the caller handles it)'),
      deprecate: (message: unknown) => log.debug({ knex: String(message) }, 'knex deprecation'),
      debug: (message: unknown) => log.debug({ knex: String(message) }, 'knex debug'),
    },
  });
}

export const MIGRATIONS_DIRECTORY = path.join(__dirname, '..', '..', 'migrations');

export function migrationConfig(): Knex.MigratorConfig {
  return { directory: MIGRATIONS_DIRECTORY, loadExtensions: ['.js'], tableName: 'knex_migrations' };
}

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = await db.migrate.latest(migrationConfig());
  return applied as string[];
}

/** Creates the database named in the URL if it does not exist (tests use their own). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name "${name}" must be a plain lowercase identifier`);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}
