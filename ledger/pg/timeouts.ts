// The bounds on Postgres statements: the client's on every query, and the server's own on the
// statements of a ledger round's transaction.
/** The longest any one query may take before the caller gets an error (a 503 for a request). */
export const QUERY_TIMEOUT_MS = 30_000;

/**
 * The server's own bound on each statement of a ledger round (ledger/store/round-transaction.ts), set
 * for the round's transaction by its first message. The client's QUERY_TIMEOUT_MS is not the
 * server's: a statement the client gave up on goes on running. With `SET LOCAL statement_timeout`
 * the server cancels a write that waits (on a lock) too long itself, and the round's COMMIT, sent
 * only after its write succeeded, never runs. The bound stays under half the client's, so a write
 * and its COMMIT both fit in what the client waits.
 */
export const LOCAL_STATEMENT_TIMEOUT_MS_DEFAULT = 14_000;

/**
 * The server's bound on a round's transaction left waiting between its messages: the ledger
 * stopped, its link to Postgres broken, or the client stuck behind an answer that was lost. Past it
 * Postgres ends the session and the transaction with it, so no lock on a ledger account outlives a
 * round whose client is gone (without it, a half-open connection held them until TCP gave up, for
 * hours). A round's messages follow each other within milliseconds; a round ended by it fails and
 * is retried (src/transient.ts).
 */
export const LOCAL_IDLE_TIMEOUT_MS = 14_000;

/** `SET LOCAL idle_in_transaction_session_timeout` of `ms`, for the first statement of a round. */
function localIdleTimeout(ms: number = LOCAL_IDLE_TIMEOUT_MS): string {
  if (!Number.isInteger(ms) || ms < 1) throw new RangeError(`an idle timeout must be a whole number of milliseconds above 0, got ${ms}`);
  return `SET LOCAL idle_in_transaction_session_timeout = ${ms}`;
}

/** `SET LOCAL statement_timeout` of `ms`, for the first statement of a message; refuses a bound the client would not wait out. */
function localStatementTimeout(ms: number = LOCAL_STATEMENT_TIMEOUT_MS_DEFAULT): string {
  if (!Number.isInteger(ms) || ms < 1 || 2 * ms >= QUERY_TIMEOUT_MS) {
    throw new RangeError(`a local statement timeout must be a whole number of milliseconds under ${QUERY_TIMEOUT_MS / 2}, got ${ms}`);
  }
  return `SET LOCAL statement_timeout = ${ms}`;
}

/** The `SET LOCAL`s of a ledger round's bounds on the server, each statement's and the idle transaction's. */
export function roundBounds(statementTimeoutMs?: number, idleTimeoutMs?: number): string[] {
  return [localStatementTimeout(statementTimeoutMs), localIdleTimeout(idleTimeoutMs)];
}
