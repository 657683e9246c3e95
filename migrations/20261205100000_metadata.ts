// Metadata (DESIGN.md section 5h): a jsonb object of the client's own string values on transfers
// (their reversals keep theirs in `reversals`), holds, payments, customers and contacts, {} when
// none (wallets have had theirs since 20261129140000_wallets). Adding a column with a constant
// default rewrites no row.
//
// "Finding things": GET /v1/transfers, /v1/holds, /v1/payments and /v1/transactions take
// metadata[<key>]=<value>, answered from these GIN indexes (jsonb_path_ops: one entry per key and
// value, for @> containment) in time that does not grow with the account's history. They are
// partial, on metadata <> '{}': an object without metadata never enters them, so the ledger's round
// pays nothing for an index it does not use; every metadata filter names the same condition
// (src/db/keyset-pages.ts whereMetadata), which lets the planner take them. Without GIN's pending
// list (fastupdate off): with it, rows wait in an unsorted list (up to gin_pending_list_limit, 4 MB)
// until a vacuum merges them, and every lookup reads the whole list; after 101,000 transfers were
// seeded, one order's lookup read 498 pages and took 7.8 ms, where the list merged it reads a few.
// A row with metadata pays its index entries when it is written instead.
import type { Knex } from 'knex';

const TABLES = ['transfers', 'holds', 'payments', 'customers', 'contacts'];
const INDEXED = ['transfers', 'holds', 'payments'];

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw(`ALTER TABLE ${table} ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb`);
  for (const table of INDEXED) {
    await knex.raw(`CREATE INDEX ${table}_metadata ON ${table} USING gin (metadata jsonb_path_ops) WITH (fastupdate = off) WHERE metadata <> '{}'::jsonb`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of INDEXED) await knex.raw(`DROP INDEX IF EXISTS ${table}_metadata`);
  for (const table of TABLES) await knex.raw(`ALTER TABLE ${table} DROP COLUMN IF EXISTS metadata`);
}
