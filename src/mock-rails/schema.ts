// Where the mock partners keep their books: Postgres, in the mock_rails schema, through a pool of
// their own (they stand for outside systems, so they share nothing with the service but the
// server). A book is one deployment of the rails: the sandbox's, or a test's own.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { createDb, type Db } from '../db';

export interface RailsBooks {
  db: Db;
  /** The book every row of this deployment belongs to. */
  book: string;
  close(): Promise<void>;
}

/** One partner's part of the books: the key of every row it reads or writes. */
export interface PartnerBook {
  db: Db;
  book: string;
  partner: string;
}

export const SCHEMA = 'mock_rails';
const POOL_MAX = 5;
const DUPLICATE_SCHEMA = '42P06';
const UNIQUE_VIOLATION = '23505';

/** Connects and brings the schema to its latest version. */
export async function openBooks(databaseUrl: string, book: string): Promise<RailsBooks> {
  // No JIT: a statement page is one bounded keyset query, which JIT compiled for 20-50 ms, longer
  // than the query itself ran.
  const db = createDb(databaseUrl, POOL_MAX, 0, '-c jit=off');
  try {
    // Two processes starting at once may both try to create the schema; one of them wins.
    await db.raw(`CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`).catch((error: { code?: string }) => {
      if (error.code !== DUPLICATE_SCHEMA && error.code !== UNIQUE_VIOLATION) throw error;
    });
    await db.migrate.latest({ directory: path.join(__dirname, 'migrations'), loadExtensions: ['.js'], schemaName: SCHEMA, tableName: 'knex_migrations' });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { db, book, close: () => db.destroy() };
}

/** The SHA-256 of a secret in hex, which is all the books keep of tokens and codes. */
export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
