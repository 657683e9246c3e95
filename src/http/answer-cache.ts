// The final answers of the routes the ledger decides (DESIGN.md section 5f), cached in Redis so a
// replay is answered at once, without a round trip through Kafka and the ledger: a client that
// repeats a request after a timeout or a network error, while the ledger or Kafka is slow, gets
// its answer. The cache is never the truth: the ledger's processed command is. An answer missing
// here (never cached, evicted, Redis restarted) is asked of the ledger, which gives the same one.
// Entries are keyed by the API key that sent the request (its hash) and the Idempotency-Key, so
// the entry is read in the rate limiter's Redis call, before authentication knows the account; a
// request with another credential of the same account asks the ledger.
import type Koa from 'koa';
import type { ReadAlong } from '../guards/rate-limit';
import { log } from '../log';
import type { RedisClient } from '../redis';
import { asReplay, IDEMPOTENCY_TTL_SECONDS } from './idempotency';
import type { RouteDef, RouteRequest, RouteResult } from './route';
import { DomainError } from '../errors';

/** What a replay of the key answers, and the fingerprint of the request it answers. */
interface CachedAnswer { fingerprint: string; status: number; body: unknown }

/** The hash of the request's API key, when authentication's read names one (src/auth/authenticate.ts). */
const keyHashOf = (ctx: Koa.Context): string | null => (ctx.state.keyLookup as { hash?: string } | undefined)?.hash ?? null;

export class LedgerAnswerCache {
  constructor(private readonly redis: RedisClient) {}

  /** The entry a request to a route the ledger decides would replay, read in the rate limiter's call; null when none applies. */
  reads = (ctx: Koa.Context, route: RouteDef): ReadAlong | null => {
    if (route.idempotent !== 'ledger') return null;
    const keyHash = keyHashOf(ctx);
    const idempotencyKey = ctx.get('idempotency-key');
    if (keyHash === null || idempotencyKey === '') return null;
    return { key: `idem:ledger:${keyHash}:${idempotencyKey}` };
  };

  /**
   * The cached answer as a replay (or a conflict, for another request under the key), else the
   * handler's answer, cached when it is the key's final answer.
   */
  answer = async (request: RouteRequest, read: ReadAlong | null, execute: () => Promise<RouteResult>): Promise<RouteResult> => {
    const cached = read?.value ? parse(read.value) : null;
    if (cached) {
      if (cached.fingerprint !== request.fingerprint) throw new DomainError('idempotency_conflict', 'this Idempotency-Key was already used with a different request', 'Idempotency-Key');
      return { status: cached.status, body: cached.body, headers: { 'Idempotent-Replayed': 'true' } };
    }
    const result = await execute();
    if (read && result.final !== false) {
      const replay = asReplay(result);
      const entry: CachedAnswer = { fingerprint: request.fingerprint!, status: replay.status, body: replay.body };
      this.redis.set(read.key, JSON.stringify(entry), 'EX', IDEMPOTENCY_TTL_SECONDS)
        .catch((error) => log.warn({ err: error }, 'an answer was not cached; its replay will ask the ledger'));
    }
    return result;
  };
}

function parse(raw: string): CachedAnswer | null {
  try {
    return JSON.parse(raw) as CachedAnswer;
  } catch {
    return null;
  }
}
