// Failures that may go away on their own: a dependency restarting, a connection dropped, a lock
// conflict, a wait that timed out. The consumers retry them instead of refusing or dead-lettering
// the messages (a ledger round that waited past its statement timeout on a lock is no bad command);
// the HTTP layer answers 503.
const TRANSIENT_ERROR_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN',
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57014', // query_canceled: a statement_timeout (a round's write that waited on a lock)
  '57P01', '57P02', '57P03', // admin shutdown, crash shutdown, cannot connect now
  '25P03', // idle_in_transaction_session_timeout: the server ended a round left waiting (ledger/pg/timeouts.ts)
  '53300', // too_many_connections
]);

export function isTransient(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, retriable } = error as { code?: unknown; retriable?: unknown };
  if (retriable === true) return true;
  if (typeof code === 'string' && (TRANSIENT_ERROR_CODES.has(code) || code.startsWith('08'))) return true;
  const message = (error as Error).message ?? '';
  // node-postgres's own query_timeout (the client stopped waiting for an answer), its connection
  // timeout (a server that accepts and never answers, stopped or stalled: the socket destroyed with
  // "timeout expired"), and a connection it saw end (the server ended the session: a restart, or a
  // transaction left idle too long).
  return /Knex: Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED|Query read timeout|^timeout expired$|is not queryable/.test(message);
}

