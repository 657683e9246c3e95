// "Now" for the rules that depend on time (STYLE.md, "Time and tests"): they read it here, never
// from Date.now() behind their back. An account on a test clock (DESIGN.md section 5i) reads its
// clock's time instead of the wall's, which is why the account is named and the answer is a
// promise: a clock's time lives in Postgres (test_clocks), where an advance moves it.
//
// Which clock an account lives on is fixed when the account is made, so it is cached; the clock's
// time is read each time (one row by its key), since an advance may move it at any moment.
// Operational reads (timers, latencies, logs, leases) take wallNow() and wallNowMs(): this module is
// the one place that reads the wall (test/unit/tidy.test.ts holds every other file to that).

/** Runs one parameterised SQL statement (the runtime's Postgres). */
export type ClockQuery = (sql: string, params: unknown[]) => Promise<{ rows: Array<Record<string, unknown>> }>;

/** Accounts whose clock (or its absence) is cached; past this the cache starts again. */
const CACHED_ACCOUNTS_MAX = 50_000;

let query: ClockQuery | null = null;
/** Account id → its clock's id, or null: on the wall. */
const clockOfAccount = new Map<string, string | null>();

/** The wall's time: for operational reads, and for every account not on a test clock. */
export function wallNow(): Date {
  return new Date();
}

/** The wall's time in epoch milliseconds (timers, latencies, deadlines of waits). */
export function wallNowMs(): number {
  return Date.now();
}

/** Where this process reads clocks from; without it (unit tests, tools) every account is on the wall. */
export function readClocksFrom(run: ClockQuery): void {
  query = run;
  clockOfAccount.clear();
}

async function clockIdOf(run: ClockQuery, accountId: string): Promise<string | null | undefined> {
  if (clockOfAccount.has(accountId)) return clockOfAccount.get(accountId);
  const { rows } = await run('SELECT test_clock_id FROM accounts WHERE id = ?', [accountId]);
  if (rows.length === 0) return undefined; // no such account: nothing to remember
  if (clockOfAccount.size >= CACHED_ACCOUNTS_MAX) clockOfAccount.clear();
  const clockId = (rows[0].test_clock_id as string | null) ?? null;
  clockOfAccount.set(accountId, clockId);
  return clockId;
}

/** The time of a test clock, or null when there is no such clock. */
export async function clockTime(clockId: string): Promise<Date | null> {
  if (!query) return null;
  const { rows } = await query('SELECT frozen_time FROM test_clocks WHERE id = ?', [clockId]);
  return rows.length === 0 ? null : new Date(rows[0].frozen_time as Date);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The time now for `accountId`'s rules: its test clock's when it lives on one, else the wall's. */
export async function now(accountId?: string): Promise<Date> {
  if (!query || accountId === undefined || !UUID.test(accountId)) return wallNow();
  const clockId = await clockIdOf(query, accountId);
  if (!clockId) return wallNow();
  return (await clockTime(clockId)) ?? wallNow();
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
