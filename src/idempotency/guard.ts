// Idempotency of the write routes whose record the API keeps (DESIGN.md section 5). Postgres
// holds the authoritative record, so two executions of a key never run side by side even if Redis
// loses every key; Redis holds the key's reservation (key-reservations.ts), shared with the routes
// the ledger decides, and then its answer, so replays are answered without touching Postgres. A
// handler's returned result is an executed outcome and is stored; a thrown error (validation, 5xx)
// is not, so the client's retry runs again. A request that dies between its effect's commit and
// its answer's record leaves the key in progress; once its lease lapses, a retry of the same
// request runs again under the same execution id, from which a creation derives its resource's
// id: it finds what the first made (db/insert-once.ts) rather than making a second. Routes whose
// answer is the ledger's decision keep no record here: the ledger's processed command is their
// key's record (section 5f). Keys are the account's across both kinds of route, so a claim here
// is refused when the ledger holds the key, and the ledger refuses a key held here
// (ledger/store/reads.ts roundFacts).
import type { Db } from '../db';
import { DomainError, errorBody, isDomainError } from '../domain-error';
import type { RouteDef, RouteRequest, RouteResult } from '../http/route';
import { log } from '../log';
import { hasRedactions, keptAnswer, SECRET_REDACTED_HEADER } from '../redaction';
import type { RedisClient } from '../redis';
import { idempotentCommandId } from './derived-ids';
import { IDEMPOTENCY_TTL_SECONDS, idempotencyConflict, idempotencyScope, KeyReservations, routeName } from './key-reservations';
import { TickBatch } from './tick-batch';
import { wallNowMs } from '../clock';

export { IDEMPOTENCY_TTL_SECONDS };
// An in-progress claim is leased, and its holder renews the lease while it runs: a claim whose
// lease lapsed belongs to a process that died, and a retry may take it over within seconds.
const LEASE_SECONDS = 5;
const LEASE_RENEW_MS = 2_000;
const POLL_MS = 20;
/** What a duplicate past its wait is told to wait before it repeats the request. */
export const RETRY_AFTER_SECONDS = '1';

interface RecordRow {
  fingerprint: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: unknown;
}

/** A stored answer given again: a creation's 201 is 200 (SPEC.md section 4), and the header says it is a replay. */
export function asReplay(result: RouteResult): RouteResult {
  return { ...result, status: result.status === 201 ? 200 : result.status, headers: { ...result.headers, 'Idempotent-Replayed': 'true' } };
}

/**
 * The answer to a creation: 201 when this request made the resource, a replay of it when an
 * execution of the same key made it before its request died (insert-once.ts).
 */
export function createdAnswer(body: unknown, created: boolean): RouteResult {
  const answer = { status: 201, body };
  return created ? answer : asReplay(answer);
}

/**
 * A kept answer given again: its secrets redacted (a record kept before they were redacted on the
 * way in is redacted on the way out too), and, on the routes that make a secret (`secretFields`),
 * the header saying so when it was, unless the route gives them back (`restoreSecrets`).
 */
export async function asKeptReplay(result: RouteResult, route: RouteDef): Promise<RouteResult> {
  const kept = keptAnswer(result.body);
  const replay = asReplay({ ...result, body: kept.body });
  if (!route.secretFields || (!kept.redacted && !hasRedactions(kept.body))) return replay;
  const restored = route.restoreSecrets ? await route.restoreSecrets(kept.body) : null;
  if (restored !== null) return { ...replay, body: restored };
  return { ...replay, headers: { ...replay.headers, [SECRET_REDACTED_HEADER]: 'true' } };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Errors that are a key's final answer, kept and replayed as a success would be. */
const KEPT_ERRORS: ReadonlySet<string> = new Set(['partner_error']);

interface Completion { scope: string; key: string; status: number; bodyJson: string }

/**
 * What the Postgres claim found: the key taken for this request (under its execution's id), the
 * ledger holding it, or another request's record.
 */
type Claim = { kind: 'claimed'; executionId: string } | { kind: 'ledger_holds' } | { kind: 'held'; holder: RecordRow };

export class IdempotencyGuard {
  /** Completions of one event-loop turn are recorded with one UPDATE (tick-batch.ts). */
  private readonly completions: TickBatch<Completion>;
  private readonly reservations: KeyReservations;

  constructor(private readonly db: Db, redis: RedisClient, private readonly waitMsMax: number) {
    this.completions = new TickBatch((batch) => this.recordCompletions(batch));
    this.reservations = new KeyReservations(redis);
  }

  private async recordCompletions(batch: Completion[]): Promise<void> {
    await this.db.raw(
      `UPDATE idempotency_records AS r SET state = 'completed', response_status = c.status, response_body = c.body::jsonb, locked_until = NULL
       FROM unnest(?::text[], ?::text[], ?::int[], ?::text[]) AS c(scope, key, status, body)
       WHERE r.scope = c.scope AND r.idempotency_key = c.key`,
      [batch.map((c) => c.scope), batch.map((c) => c.key), batch.map((c) => c.status), batch.map((c) => c.bodyJson)],
    );
  }

  /**
   * Claims the key in Postgres, or finds the record of the request that holds it. A key the
   * ledger holds (a transfer, a faucet credit, an FX execution decided under it) is not this
   * route's: no request of this route can have that fingerprint. A claim taken over from a
   * request that died keeps its execution's id (its effect may have committed before it died); a
   * key claimed anew, or again once its record expired, gets a new one.
   */
  private async claim(scope: string, key: string, print: string): Promise<Claim> {
    const { rows } = await this.db.raw(
      `WITH ledger AS (SELECT EXISTS (SELECT 1 FROM processed_commands WHERE command_id = ?) AS holds),
       claimed AS (
         INSERT INTO idempotency_records (scope, idempotency_key, fingerprint, state, locked_until, expires_at)
         SELECT ?, ?, ?, 'in_progress', now() + make_interval(secs => ?), now() + make_interval(secs => ?) WHERE NOT (SELECT holds FROM ledger)
         ON CONFLICT (scope, idempotency_key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, state = 'in_progress', response_status = NULL, response_body = NULL,
               locked_until = EXCLUDED.locked_until, created_at = now(), expires_at = EXCLUDED.expires_at,
               execution_id = CASE WHEN idempotency_records.expires_at < now() THEN EXCLUDED.execution_id ELSE coalesce(idempotency_records.execution_id, EXCLUDED.execution_id) END
           WHERE idempotency_records.expires_at < now()
              OR (idempotency_records.state = 'in_progress' AND idempotency_records.locked_until < now()
                  AND idempotency_records.fingerprint = EXCLUDED.fingerprint)
         RETURNING execution_id)
       SELECT (SELECT holds FROM ledger) AS ledger_holds, (SELECT execution_id FROM claimed) AS execution_id`,
      [idempotentCommandId(scope, key), scope, key, print, LEASE_SECONDS, IDEMPOTENCY_TTL_SECONDS],
    );
    if (rows[0].ledger_holds) return { kind: 'ledger_holds' };
    if (rows[0].execution_id) return { kind: 'claimed', executionId: rows[0].execution_id };
    const existing: RecordRow | undefined = await this.db('idempotency_records')
      .where({ scope, idempotency_key: key })
      .first('fingerprint', 'state', 'response_status', 'response_body');
    // Deleted between the two statements (the holder failed): claim again on the next poll.
    return { kind: 'held', holder: existing ?? { fingerprint: print, state: 'in_progress', response_status: null, response_body: null } };
  }

  /** The answer to a duplicate whose first request is still running: provisional, retriable. */
  private async stillRunning(request: RouteRequest, route: RouteDef): Promise<RouteResult> {
    if (route.provisional) return route.provisional(request);
    throw new DomainError('service_unavailable', 'a request with this Idempotency-Key is still running; repeat it to learn its outcome', 'Idempotency-Key', { 'Retry-After': RETRY_AFTER_SECONDS });
  }

  private async renewLease(scope: string, key: string): Promise<void> {
    try {
      await this.db('idempotency_records').where({ scope, idempotency_key: key, state: 'in_progress' })
        .update({ locked_until: this.db.raw('now() + make_interval(secs => ?)', [LEASE_SECONDS]) });
    } catch (error) {
      log.warn({ err: error }, 'idempotency lease not renewed; a duplicate may run after the lease lapses');
    }
  }

  private async release(scope: string, key: string): Promise<void> {
    await this.db('idempotency_records').where({ scope, idempotency_key: key, state: 'in_progress' }).delete();
  }

  run = async (request: RouteRequest, route: RouteDef, execute: (executionId: string) => Promise<RouteResult>): Promise<RouteResult> => {
    const scope = idempotencyScope(request);
    const key = request.idempotencyKey!;
    const print = request.fingerprint!;
    const name = routeName(route);
    const deadline = wallNowMs() + this.waitMsMax;
    // A request that reserved the key gives it back when the key proves to be another's: Redis
    // had lost the owner's reservation, and the owner's own retry must not be refused by this one.
    let reserved = false;
    const refuse = async (): Promise<never> => {
      if (reserved) await this.reservations.release(scope, key, name, print);
      throw idempotencyConflict();
    };

    let executionId: string;
    for (;;) {
      const reservation = await this.reservations.reserve(scope, key, name, print);
      if (reservation.kind === 'reserved') reserved = true;
      if (reservation.kind === 'held') {
        const { entry } = reservation;
        // Another route's request, or another body: refused at once, even while it still runs.
        if (entry.fingerprint !== print) return refuse();
        if (entry.status !== undefined) return asKeptReplay({ status: entry.status, body: entry.body }, route);
      }
      const claim = await this.claim(scope, key, print);
      if (claim.kind === 'claimed') {
        executionId = claim.executionId;
        break;
      }
      if (claim.kind === 'ledger_holds') return refuse();
      const { holder } = claim;
      if (holder.fingerprint !== print) return refuse();
      if (holder.state === 'completed') {
        const answer = { status: holder.response_status!, body: keptAnswer(holder.response_body).body };
        await this.reservations.storeAnswer(scope, key, { route: name, fingerprint: print, ...answer });
        return asKeptReplay(answer, route);
      }
      // Never 409 for "still running": SPEC.md section 7 tells clients not to retry a 409, so
      // they would never learn the outcome (DESIGN.md section 5). Answer as a late decision.
      if (wallNowMs() >= deadline) return this.stillRunning(request, route);
      await sleep(POLL_MS);
    }

    let result: RouteResult;
    const renewal = setInterval(() => void this.renewLease(scope, key), LEASE_RENEW_MS);
    // Not executed to a final answer: the key is free again, in Postgres and in Redis, so the
    // client's retry (with any body) runs as a first request would.
    const giveBack = async () => {
      await this.release(scope, key);
      await this.reservations.release(scope, key, name, print);
    };
    try {
      result = await execute(executionId);
    } catch (error) {
      clearInterval(renewal);
      // A partner_error is the key's answer once the request reached the partner: the operation
      // may have happened, so the same key must not run it again as something else (another
      // body, a concurrent duplicate); the client reads the resource to learn how it ended.
      if (isDomainError(error) && KEPT_ERRORS.has(error.code)) {
        const answer = { status: error.status, body: errorBody(error) };
        await this.completions.submit({ scope, key, status: answer.status, bodyJson: JSON.stringify(answer.body) });
        await this.reservations.storeAnswer(scope, key, { route: name, fingerprint: print, ...answer });
        throw error;
      }
      await giveBack();
      throw error;
    } finally {
      clearInterval(renewal);
    }
    if (result.final === false) {
      await giveBack();
      return result;
    }
    // The client gets the secret this once; Postgres and Redis keep the answer without it.
    const kept = keptAnswer(result.body);
    await this.completions.submit({ scope, key, status: result.status, bodyJson: kept.json });
    await this.reservations.storeAnswer(scope, key, { route: name, fingerprint: print, status: result.status, body: kept.body });
    return result;
  };
}
