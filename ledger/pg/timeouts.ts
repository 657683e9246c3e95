// The bounds on Postgres statements: the client's on every query, and the server's own on the
// statements of a ledger round's transaction.
/** The longest any one query may take before the caller gets an error (a 503 for a request). */
export const QUERY_TIMEOUT_MS = 30_000;

/**
 * The server's own bound on each statement of a ledger round (ledger/round-transaction.ts), set
 * for the round's transaction by its first message. The client's QUERY_TIMEOUT_MS is not the
 * server's: a message the client gave up on goes on running, and a write that waited (on a lock)
 * past it would then commit a round its handler had reported as failed. With `SET LOCAL
 * statement_timeout` the server cancels the waiting statement itself, and the COMMIT after it in
 * the same message never runs. Postgres (13 and later) times each statement of a message on its
 * own, so a write and its COMMIT may take two bounds: the bound stays under half the client's.
 */
export const LOCAL_STATEMENT_TIMEOUT_MS_DEFAULT = 14_000;

/** `SET LOCAL statement_timeout` of `ms`, for the first statement of a message; refuses a bound the client would not wait out. */
export function localStatementTimeout(ms: number = LOCAL_STATEMENT_TIMEOUT_MS_DEFAULT): string {
  if (!Number.isInteger(ms) || ms < 1 || 2 * ms >= QUERY_TIMEOUT_MS) {
    throw new RangeError(`a local statement timeout must be a whole number of milliseconds under ${QUERY_TIMEOUT_MS / 2}, got ${ms}`);
  }
  return `SET LOCAL statement_timeout = ${ms}`;
}

