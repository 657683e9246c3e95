// "Now" for the rules that depend on time (STYLE.md, "Time and tests"): they read it here, never
// from Date.now() behind their back. An account on a test clock (DESIGN.md section 5i) reads its
// clock's time instead of the wall's, which is why the account is named and the answer is a
// promise: a clock's time lives in Postgres (test_clocks), where an advance moves it.
//
// Which clock an account lives on is fixed when the account is made, so it is cached; the clock's
// time is read each time (one row by its key), since an advance may move it at any moment.
// Operational reads (timers, latencies, logs, leases) take wallNow() and wallNowMs(): this module is
// with ledger/clock.ts (the ledger imports nothing of src/), the one place that reads the wall
// (test/unit/tidy.test.ts holds every other file to that).

/** What the clock reads Postgres through: the runtime's knex (src/db), named by its shape alone. */
export interface ClockDb {
  raw(sql: string, bindings: readonly string[]): PromiseLike<{ rows: Array<Record<string, unknown>> }>;
}

/** Accounts whose clock (or its absence) is cached, per database; past this the cache starts again. */
const CACHED_ACCOUNTS_MAX = 50_000;

/** Per database (a process may hold several, as the tests do): account id → its clock's id, or null: on the wall. */
const clocksOfAccounts = new WeakMap<ClockDb, Map<string, string | null>>();

/** The wall's time: for operational reads, and for every account not on a test clock. */
export function wallNow(): Date {
  return new Date();
}

/** The wall's time in epoch milliseconds (timers, latencies, deadlines of waits). */
export function wallNowMs(): number {
  return Date.now();
}

async function clockIdOf(db: ClockDb, accountId: string): Promise<string | null | undefined> {
  let cached = clocksOfAccounts.get(db);
  if (!cached) clocksOfAccounts.set(db, cached = new Map());
  if (cached.has(accountId)) return cached.get(accountId);
  const { rows } = await db.raw('SELECT test_clock_id FROM accounts WHERE id = ?', [accountId]);
  if (rows.length === 0) return undefined; // no such account: nothing to remember
  if (cached.size >= CACHED_ACCOUNTS_MAX) cached.clear();
  const clockId = (rows[0].test_clock_id as string | null) ?? null;
  cached.set(accountId, clockId);
  return clockId;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The time now for `accountId`'s rules: its test clock's when it lives on one, else the wall's. */
export async function now(db: ClockDb, accountId: string): Promise<Date> {
  if (!UUID.test(accountId)) return wallNow();
  const clockId = await clockIdOf(db, accountId);
  if (!clockId) return wallNow();
  const { rows } = await db.raw('SELECT frozen_time FROM test_clocks WHERE id = ?', [clockId]);
  return rows.length === 0 ? wallNow() : new Date(rows[0].frozen_time as Date);
}

/** The id of the test clock `accountId` lives on, or null: it reads the wall (as does an account that does not exist). */
export async function testClockOf(db: ClockDb, accountId: string): Promise<string | null> {
  if (!UUID.test(accountId)) return null;
  return (await clockIdOf(db, accountId)) ?? null;
}

/**
 * Which accounts a time-driven worker serves: null, those on no test clock (the wall's workers:
 * hold expiry, scheduled runs); a clock's id, the accounts on that clock, served as it advances.
 */
export type ClockScope = string | null;

/** SQL: the account id in `column` is in the scope (with its bindings). */
export function inClockScope(column: string, clockId: ClockScope): { sql: string; bindings: string[] } {
  return clockId === null
    ? { sql: `NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = ${column} AND a.test_clock_id IS NOT NULL)`, bindings: [] }
    : { sql: `${column} IN (SELECT a.id FROM accounts a WHERE a.test_clock_id = ?)`, bindings: [clockId] };
}
