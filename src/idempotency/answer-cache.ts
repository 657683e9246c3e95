// The final answers of the routes the ledger decides (DESIGN.md section 5f), cached in Redis so a
// replay is answered at once, without a round trip through Kafka and the ledger: a client that
// repeats a request after a timeout or a network error, while the ledger or Kafka is slow, gets
// its answer. The cache is never the truth: the ledger's processed command is. An answer missing
// here (never cached, evicted, Redis restarted) is asked of the ledger, which gives the same one.
// Entries are keyed by the API key that sent the request (its hash) and the Idempotency-Key, so
// the entry is read in the rate limiter's Redis call, before authentication knows the account; a
// request with another credential of the same account asks the ledger.
// Before the command is sent, the request reserves its key for the account (key-reservations.ts),
// so a request of another route under the key is refused while the command is still in Kafka,
// and this one is refused at once when another route's request reserved the key first.
import type Koa from 'koa';
import type { ReadAlong } from '../guards/rate-limit';
import { log } from '../log';
import type { RedisClient } from '../redis';
import { asReplay } from './guard';
import { IDEMPOTENCY_TTL_SECONDS, idempotencyConflict, idempotencyScope, KeyReservations, routeName } from './key-reservations';
import type { RouteDef, RouteRequest, RouteResult } from '../http/route';
import { isDomainError } from '../domain-error';
import { keptAnswer } from '../redaction';

/** What a replay of the key answers, and the fingerprint of the request it answers. */
interface CachedAnswer { fingerprint: string; status: number; body: unknown }

/** The hash of the request's API key, when authentication's read names one (src/auth/authenticate.ts). */
const keyHashOf = (ctx: Koa.Context): string | null => (ctx.state.keyLookup as { hash?: string } | undefined)?.hash ?? null;

/** The ledger's answer that the key is another request's: it answers this request, not the key (answers.ts). */
const isConflictAnswer = (result: RouteResult): boolean =>
  result.status === 409 && (result.body as { error?: unknown } | null)?.error === 'idempotency_conflict';

export class LedgerAnswerCache {
  private readonly reservations: KeyReservations;

  constructor(private readonly redis: RedisClient) {
    this.reservations = new KeyReservations(redis);
  }

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
   * handler's answer, cached when it is the key's final answer. The handler runs (and sends its
   * command) only once the key is reserved for this request, or was for the same request before
   * (a retry of a command in flight: the ledger answers it as pending or as a replay).
   */
  answer = async (request: RouteRequest, route: RouteDef, read: ReadAlong | null, execute: () => Promise<RouteResult>): Promise<RouteResult> => {
    const cached = read?.value ? parse(read.value) : null;
    if (cached) {
      if (cached.fingerprint !== request.fingerprint) throw idempotencyConflict();
      return { status: cached.status, body: cached.body, headers: { 'Idempotent-Replayed': 'true' } };
    }
    const result = await this.reserved(request, route, execute);
    if (read && result.final !== false) {
      const replay = asReplay(result);
      // Kept as every stored answer is: without a secret in clear (src/redaction.ts).
      const entry: CachedAnswer = { fingerprint: request.fingerprint!, status: replay.status, body: keptAnswer(replay.body).body };
      this.redis.set(read.key, JSON.stringify(entry), 'EX', IDEMPOTENCY_TTL_SECONDS)
        .catch((error) => log.warn({ err: error }, 'an answer was not cached; its replay will ask the ledger'));
    }
    return result;
  };

  /** Runs the handler under the key's reservation; another request's reservation is a conflict at once. */
  private async reserved(request: RouteRequest, route: RouteDef, execute: () => Promise<RouteResult>): Promise<RouteResult> {
    const scope = idempotencyScope(request);
    const key = request.idempotencyKey!;
    const print = request.fingerprint!;
    const name = routeName(route);
    const reservation = await this.reservations.reserve(scope, key, name, print);
    if (reservation.kind === 'held' && reservation.entry.fingerprint !== print) throw idempotencyConflict();
    // Redis away: the ledger's check against the API's records decides alone.
    if (reservation.kind !== 'reserved') return execute();
    let result: RouteResult;
    try {
      result = await execute();
    } catch (error) {
      // A 4xx thrown by the handler refused the request before its command was sent: the key
      // stays free. Any other failure may have sent it, and the reservation stays with it.
      if (isDomainError(error) && error.status < 500) await this.reservations.release(scope, key, name, print);
      throw error;
    }
    // The ledger found the key another's (Redis had lost that reservation): this one is not the key's owner.
    if (isConflictAnswer(result)) await this.reservations.release(scope, key, name, print);
    return result;
  }
}

function parse(raw: string): CachedAnswer | null {
  try {
    return JSON.parse(raw) as CachedAnswer;
  } catch {
    return null;
  }
}
