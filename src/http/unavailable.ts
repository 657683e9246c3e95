// A dependency that is away (Postgres, Redis, Kafka, the schema registry) is not a bug of this
// service: the request answers 503 service_unavailable naming the dependency, with Retry-After,
// so a client repeats it (SPEC.md section 7: safe with the same Idempotency-Key).
import { DomainError } from '../domain-error';
import { isTransient } from '../transient';

/** Which dependency a failure says is away, or null when it says nothing of the kind. */
export function unavailableDependency(error: unknown): string | null {
  if (error === null || typeof error !== 'object') return null;
  const { name = '', message = '' } = error as { name?: string; message?: string };
  if (name.startsWith('KafkaJS')) return 'kafka';
  // ioredis, with no offline queue, refuses a command at once while it is disconnected.
  if (/Connection is closed|Stream isn't writeable|enableOfflineQueue|max retries per request|Command timed out/i.test(message)) return 'redis';
  // What is left on the request path that passes by itself is Postgres: pg's socket errors,
  // its connection and pool timeouts, and its server-side connection and lock codes.
  if (isTransient(error) || /timeout exceeded when trying to connect/i.test(message)) return 'postgres';
  return null;
}

export function dependencyUnavailable(dependency: string): DomainError {
  return new DomainError('service_unavailable', `${dependency} is unavailable; repeat the request shortly`, dependency, { 'Retry-After': '2' });
}
