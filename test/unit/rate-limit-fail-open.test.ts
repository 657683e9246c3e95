// The rate limiter fails open (src/guards/rate-limit.ts): with Redis unreachable a request is let
// through rather than refused, since nothing else depends on the limiter.
import assert from 'node:assert/strict';
import type Koa from 'koa';
import { RateLimiter } from '../../src/guards/rate-limit';
import { createRedis, type RedisClient } from '../../src/redis';

function fakeContext(authorization: string): { ctx: Koa.Context; headers: Map<string, string> } {
  const headers = new Map<string, string>();
  const ctx = {
    ip: '127.0.0.1',
    get: (name: string) => (name.toLowerCase() === 'authorization' ? authorization : ''),
    set: (name: string, value: string) => { headers.set(name.toLowerCase(), value); },
  } as unknown as Koa.Context;
  return { ctx, headers };
}

describe('rate limiter without Redis', () => {
  let redis: RedisClient;
  before(() => {
    // Port 1: nothing listens, so every command fails at once (no offline queue).
    redis = createRedis('redis://127.0.0.1:1', 'fail-open-test:');
    redis.on('error', () => undefined);
  });
  after(() => redis.disconnect());

  it('lets every request through and sets no limit headers', async () => {
    const limiter = new RateLimiter(redis, 1, 1);
    for (let i = 0; i < 5; i++) {
      const { ctx, headers } = fakeContext('Bearer sk_sandbox_00000000000000000000000000000000');
      await assert.doesNotReject(limiter.limit(ctx), `request ${i + 1}`);
      assert.equal(headers.size, 0);
    }
  });
});
