// Redis connections. Keys are namespaced with a prefix so tests never touch development data.
import Redis from 'ioredis';

export type RedisClient = Redis;

export function createRedis(redisUrl: string, keyPrefix: string): RedisClient {
  return new Redis(redisUrl, {
    keyPrefix,
    // Fail fast instead of queueing commands forever while Redis is down: the rate limiter
    // fails open and idempotency falls back to Postgres (DESIGN.md section 5).
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    lazyConnect: false,
    // Commands issued in the same tick go out as one pipeline: fewer writes under load.
    enableAutoPipelining: true,
  });
}

export function redisReady(redis: RedisClient, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis not ready after ${timeoutMs} ms`)), timeoutMs);
    redis.once('ready', () => { clearTimeout(timer); resolve(); });
  });
}
