// A dependency that is away (Postgres, Redis, Kafka, the schema registry) is not a bug of this
// service: the request answers 503 service_unavailable naming the dependency, with Retry-After,
// so a client repeats it (SPEC.md section 7: safe with the same Idempotency-Key).
import { DomainError } from '../errors';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENOTCONN']);

/** Which dependency a failure says is away, or null when it says nothing of the kind. */
export function unavailableDependency(error: unknown): string | null {
  if (error === null || typeof error !== 'object') return null;
  const { name = '', message = '', code } = error as { name?: string; message?: string; code?: unknown };
  if (name.startsWith('KafkaJS')) return 'kafka';
  if (/Knex: Timeout acquiring a connection|Connection terminated|timeout exceeded when trying to connect|Query read timeout/i.test(message)) return 'postgres';
  if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P03' || code === '53300')) return 'postgres';
  if (/Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries per request|Command timed out/i.test(message)) return 'redis';
  if (typeof code === 'string' && NETWORK_CODES.has(code)) {
    const port = String((error as { port?: unknown }).port ?? '');
    if (/ioredis|redis/i.test(String((error as { stack?: string }).stack))) return 'redis';
    return port === '6379' ? 'redis' : 'postgres';
  }
  return null;
}

export function dependencyUnavailable(dependency: string): DomainError {
  return new DomainError('service_unavailable', `${dependency} is unavailable; repeat the request shortly`, dependency, { 'Retry-After': '2' });
}
