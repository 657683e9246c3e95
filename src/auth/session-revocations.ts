// Server-side sign-out (issue 38): a session token stays valid until it expires, so signing out
// leaves a marker in Redis under the session's id (its `jti`) for the rest of its lifetime, and
// every request with a session looks for it, as API-key revocation leaves `!revoked:` markers
// (key-cache.ts). Writing the marker is the sign-out: if Redis cannot take it, nothing changed and
// the request answers 503. Reading it fails open (logged): with Redis away a signed-out session
// works until Redis returns or the token expires, as sessions did before sign-out existed.
import { DomainError } from '../domain-error';
import { log } from '../log';
import type { RedisClient } from '../redis';

const MARK_TIMEOUT_MS = 2_000;
const markerKey = (sessionId: string) => `auth:session:revoked:${sessionId}`;

export class SessionRevocations {
  private lastFailOpenLogMs = 0;

  constructor(private readonly redis: RedisClient) {}

  /**
   * Signs the session out on every server, until `expiresAtSeconds` (after which it is refused anyway).
   * @throws DomainError service_unavailable when Redis cannot take the marker
   */
  async revoke(sessionId: string, expiresAtSeconds: number): Promise<void> {
    const ttlSeconds = Math.max(1, expiresAtSeconds - Math.floor(Date.now() / 1000) + 1);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.redis.set(markerKey(sessionId), '1', 'EX', ttlSeconds),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer from Redis within ${MARK_TIMEOUT_MS} ms`)), MARK_TIMEOUT_MS); }),
      ]);
    } catch (error) {
      log.warn({ err: error }, 'a session could not be signed out: Redis is unavailable');
      throw new DomainError('service_unavailable', 'redis is unavailable, so the sign-out could not be made to hold in every server; the session still works: repeat the request shortly', 'redis', { 'Retry-After': '2' });
    } finally {
      clearTimeout(timer);
    }
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    try {
      return (await this.redis.exists(markerKey(sessionId))) === 1;
    } catch (error) {
      if (Date.now() - this.lastFailOpenLogMs > 10_000) {
        this.lastFailOpenLogMs = Date.now();
        log.warn({ err: error }, 'session sign-outs cannot be read from Redis: sessions are accepted until their expiry');
      }
      return false;
    }
  }
}
