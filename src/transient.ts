// Failures that may go away on their own: a dependency restarting, a connection dropped, a lock
// conflict. The consumers retry them instead of dead-lettering; the HTTP layer answers 503.
const TRANSIENT_ERROR_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN',
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57P01', '57P02', '57P03', // admin shutdown, crash shutdown, cannot connect now
  '53300', // too_many_connections
]);

export function isTransient(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, retriable } = error as { code?: unknown; retriable?: unknown };
  if (retriable === true) return true;
  if (typeof code === 'string' && (TRANSIENT_ERROR_CODES.has(code) || code.startsWith('08'))) return true;
  const message = (error as Error).message ?? '';
  return /Knex: Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED/.test(message);
}

