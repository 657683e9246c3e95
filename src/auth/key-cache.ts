// API-key principals, with their account's view, cached in Redis by key hash, so an
// authenticated request (and GET /v1/accounts/me) needs no Postgres lookup. Revoking a key or changing an account's KYB status deletes the entries
// before it answers, so the next request, in any process, reads Postgres again. Only valid keys
// are cached: unknown and revoked keys always take the same Postgres path (same answer, same
// time). If Redis is unavailable, lookups fall back to Postgres.
import type { AccountView } from '../accounts/views';
import { log } from '../log';
import type { RedisClient } from '../redis';

export interface CachedKey {
  id: string;
  account_id: string;
  type: 'secret' | 'publishable' | 'restricted';
  scopes: string[];
  /** The account as GET /v1/accounts/me shows it; only KYB changes alter it after creation. */
  account: AccountView;
}

const TTL_SECONDS = 300;
const cacheKey = (keyHash: string) => `auth:key:v2:${keyHash}`;

export class KeyCache {
  constructor(private readonly redis: RedisClient) {}

  /** The Redis key (without the connection's prefix) of a key hash's entry. */
  redisKey(keyHash: string): string {
    return cacheKey(keyHash);
  }

  /** An entry as read from Redis; null when absent or unreadable (Postgres is asked instead). */
  parse(raw: string | null): CachedKey | null {
    try {
      return raw ? (JSON.parse(raw) as CachedKey) : null;
    } catch {
      return null;
    }
  }

  async get(keyHash: string): Promise<CachedKey | null> {
    return this.parse(await this.redis.get(cacheKey(keyHash)).catch(() => null));
  }

  remember(keyHash: string, value: CachedKey): void {
    this.redis.set(cacheKey(keyHash), JSON.stringify(value), 'EX', TTL_SECONDS).catch(() => undefined);
  }

  /** Must run before a revocation or KYB change answers; a failure is logged loudly. */
  async forget(keyHashes: string[]): Promise<void> {
    if (keyHashes.length === 0) return;
    try {
      await this.redis.del(...keyHashes.map(cacheKey));
    } catch (error) {
      log.error({ err: error, keys: keyHashes.length }, `could not clear cached API keys: they stay valid for up to ${TTL_SECONDS} s`);
    }
  }
}
