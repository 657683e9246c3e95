// Server-side sign-out (issue 38): a session token stays valid until it expires, so signing out
// records the session's id (its `jti`) in Postgres for the rest of its lifetime, and every request
// with a session asks whether it is there. Postgres is the truth, so a sign-out survives a Redis
// flush; Redis keeps a marker of each signed-out session as a cache, so a signed-out token that
// keeps knocking is refused without Postgres. Recording the row is the sign-out: if Postgres
// cannot take it, nothing changed and the request answers 503 (a transient error).
import type { Db } from '../db';
import { log } from '../log';
import type { RedisClient } from '../redis';
import { wallNowMs } from '../clock';

const markerKey = (sessionId: string) => `auth:session:revoked:${sessionId}`;
/** Expired sign-outs removed by each sign-out, at most: a token past its expiry is refused anyway. */
const EXPIRED_SWEEP_MAX = 100;

export class SessionRevocations {
  private lastCacheLogMs = 0;

  constructor(private readonly db: Db, private readonly redis: RedisClient) {}

  /** Signs the session out on every server, until `expiresAtSeconds` (after which it is refused anyway). */
  async revoke(sessionId: string, expiresAtSeconds: number): Promise<void> {
    const expiresAt = new Date(expiresAtSeconds * 1000);
    await this.db('session_revocations').insert({ session_id: sessionId, expires_at: expiresAt }).onConflict('session_id').ignore();
    await this.db.raw(`DELETE FROM session_revocations WHERE session_id IN (SELECT session_id FROM session_revocations WHERE expires_at < now() LIMIT ${EXPIRED_SWEEP_MAX})`);
    await this.mark(sessionId, expiresAtSeconds);
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    try {
      if ((await this.redis.exists(markerKey(sessionId))) === 1) return true;
    } catch (error) {
      this.cacheUnavailable(error);
    }
    const row: { expires_at: Date } | undefined = await this.db('session_revocations').where('session_id', sessionId).first('expires_at');
    if (!row) return false;
    await this.mark(sessionId, Math.floor(row.expires_at.getTime() / 1000)); // the cache lost it (a flush): put it back
    return true;
  }

  /** The cache's marker, best effort: Postgres answers without it. */
  private async mark(sessionId: string, expiresAtSeconds: number): Promise<void> {
    const ttlSeconds = Math.max(1, expiresAtSeconds - Math.floor(wallNowMs() / 1000) + 1);
    try {
      await this.redis.set(markerKey(sessionId), '1', 'EX', ttlSeconds);
    } catch (error) {
      this.cacheUnavailable(error);
    }
  }

  private cacheUnavailable(error: unknown): void {
    if (wallNowMs() - this.lastCacheLogMs > 10_000) {
      this.lastCacheLogMs = wallNowMs();
      log.warn({ err: error }, 'session sign-outs cannot be cached in Redis: read from Postgres');
    }
  }
}
