// One reservation per (account, Idempotency-Key), shared by both kinds of idempotent route
// (DESIGN.md section 5): the routes whose record the API keeps (guard.ts) and those the
// ledger decides (answer-cache.ts). Whichever request reserves the key first owns it; any other
// request under the key (another route, another body) is refused at once. Without it a key whose
// transfer was still in Kafka was free for POST /v1/contacts, and the ledger then refused the
// transfer whose client had been told `pending`.
//
// The reservation is a Redis key, `idem:<account>:<key>`, taken with SET NX before the request
// executes or sends its command; for the routes the API keeps, the key's final answer later
// replaces it (so one read answers a replay). It lives as long as a key is remembered (24 h).
// It is not the truth: Postgres is (the API's record, the ledger's processed command), and it
// still refuses a key held on the other side when Redis is away or lost the reservation. Only a
// request racing a command still in Kafka is then refused late, by the ledger, rather than at once.
import type { Result } from 'ioredis';
import { KEY_CONFLICT } from '../../ledger/outcome';
import { DomainError } from '../domain-error';
import { log } from '../log';
import type { RedisClient } from '../redis';
import { namedAccountId } from '../http/acting-account';
import type { RouteDef, RouteRequest } from '../http/route';

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/** 409 idempotency_conflict, worded as the ledger words it (ledger/outcome.ts). */
export const idempotencyConflict = (): DomainError => new DomainError(KEY_CONFLICT.code, KEY_CONFLICT.message, KEY_CONFLICT.field);

/** What `idem:<account>:<key>` holds: the owning request, and its final answer once the API stored one. */
export interface KeyEntry {
  /** Method and path of the route that owns the key (for people reading Redis; the fingerprint decides). */
  route: string;
  fingerprint: string;
  status?: number;
  body?: unknown;
}

/** `reserved`: this request took the key. `held`: a request took it before. `unknown`: Redis did not answer. */
export type Reservation = { kind: 'reserved' } | { kind: 'held'; entry: KeyEntry } | { kind: 'unknown' };

// Deletes the key only while it still holds this reservation: never a stored answer, nor another
// request's reservation taken since.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** numberOfKeys (1), the key, the reservation it must still hold. */
    releaseKeyReservation(...args: Array<string | number>): Result<number, Context>;
  }
}

function parse(raw: string): KeyEntry | null {
  try {
    return JSON.parse(raw) as KeyEntry;
  } catch {
    return null;
  }
}

export class KeyReservations {
  constructor(private readonly redis: RedisClient) {
    redis.defineCommand('releaseKeyReservation', { lua: RELEASE });
  }

  private redisKey(scope: string, key: string): string {
    return `idem:${scope}:${key}`;
  }

  /** The reservation's exact text: the same request always writes the same, so a release matches it. */
  private reservationText(route: string, fingerprint: string): string {
    return JSON.stringify({ route, fingerprint } satisfies KeyEntry);
  }

  /** Takes the key for this request unless a request took it before; one round trip (SET NX GET). */
  async reserve(scope: string, key: string, route: string, fingerprint: string): Promise<Reservation> {
    try {
      const before = await this.redis.set(this.redisKey(scope, key), this.reservationText(route, fingerprint), 'EX', IDEMPOTENCY_TTL_SECONDS, 'NX', 'GET');
      if (before === null) return { kind: 'reserved' };
      const entry = parse(before);
      return entry ? { kind: 'held', entry } : { kind: 'unknown' };
    } catch (error) {
      log.warn({ err: error }, 'idempotency reservations unavailable; the Postgres records decide this key');
      return { kind: 'unknown' };
    }
  }

  /** Gives the key back: this request does not own it (refused, failed before executing, or the key is another's). */
  async release(scope: string, key: string, route: string, fingerprint: string): Promise<void> {
    try {
      await this.redis.releaseKeyReservation(1, this.redisKey(scope, key), this.reservationText(route, fingerprint));
    } catch (error) {
      // It lapses with its TTL; until then a request with another body under this key is refused.
      log.warn({ err: error }, 'an idempotency reservation was not released');
    }
  }

  /** The key's final answer replaces its reservation: a replay reads it in the same call that reserves. */
  async storeAnswer(scope: string, key: string, entry: KeyEntry): Promise<void> {
    try {
      await this.redis.set(this.redisKey(scope, key), JSON.stringify(entry), 'EX', IDEMPOTENCY_TTL_SECONDS);
    } catch (error) {
      log.warn({ err: error }, 'idempotency cache unavailable; the Postgres record still protects this key');
    }
  }
}

/**
 * The account whose key a request uses, the same on both kinds of route: the caller's account; the
 * master key acts for the account it names (the account the ledger's command is sent for).
 */
export function idempotencyScope(request: RouteRequest): string {
  const principal = request.principal;
  return principal?.accountId ?? namedAccountId(request) ?? principal?.credentialId ?? 'anonymous';
}

/** The route a reservation names: method and declared path. */
export const routeName = (route: RouteDef): string => `${route.method} ${route.path}`;
