// Per-credential token bucket in Redis: one atomic script call per request. If Redis is down
// the limiter lets requests through (fails open) and says so in the log; nothing else depends
// on it.
import { createHash } from 'node:crypto';
import type Koa from 'koa';
import type { Result } from 'ioredis';
import { DomainError } from '../errors';
import { log } from '../log';
import type { RedisClient } from '../redis';

// KEYS[1] bucket, KEYS[2..] keys to read in the same call; ARGV rate per second, burst. Time
// comes from the Redis server, so every API process sees one clock. Returns {allowed, tokens
// left, ms until one token, then the value of each key to read, or false}.
const TOKEN_BUCKET = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
local answer = {allowed, math.floor(tokens), wait}
for i = 2, #KEYS do answer[i + 2] = redis.call('GET', KEYS[i]) end
return answer
`;

/** A Redis key read in the rate limiter's call; `value` is set by the call. */
export interface ReadAlong {
  key: string;
  /** The credential's bucket name, from a digest the caller computed anyway (saves a hash). */
  subject?: string;
  value?: string | null;
}

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** numberOfKeys, the bucket, the keys to read, rate, burst. */
    takeTokenAndRead(...args: Array<string | number>): Result<Array<number | string | null>, Context>;
  }
}

export class RateLimiter {
  private lastFailOpenLogMs = 0;

  constructor(private readonly redis: RedisClient, private readonly ratePerSecond: number, private readonly burst: number) {
    redis.defineCommand('takeTokenAndRead', { lua: TOKEN_BUCKET });
  }

  /** Loads the limiter's script into Redis (its first call would), on a bucket of its own. */
  async warm(): Promise<void> {
    await this.redis.takeTokenAndRead(1, `rl:warm-up:${process.pid}`, 1, 1);
  }

  /**
   * Runs before authentication, keyed by a hash of the presented credential: a caller is
   * limited per credential, and guessing keys is limited too. `reads` names keys the request
   * will need (a cached API key, a cached answer): they are read in the same call and each value
   * (null when absent) stored in it; left undefined when Redis could not be asked. The first
   * read's subject, when it has one, names the bucket.
   */
  limit = async (ctx: Koa.Context, reads: ReadAlong[] = []): Promise<void> => {
    if (this.ratePerSecond === 0) return; // 0 turns the limiter off
    const credential = ctx.get('authorization');
    const named = reads[0]?.subject;
    const subject = named ? `key:${named}`
      : credential ? `cred:${createHash('sha256').update(credential).digest('base64url').slice(0, 22)}` : `ip:${ctx.ip}`;
    let answer: Array<number | string | null>;
    try {
      answer = await this.redis.takeTokenAndRead(1 + reads.length, `rl:${subject}`, ...reads.map((r) => r.key), this.ratePerSecond, this.burst);
    } catch (error) {
      if (Date.now() - this.lastFailOpenLogMs > 10_000) {
        this.lastFailOpenLogMs = Date.now();
        log.warn({ err: error }, 'rate limiter cannot reach Redis: failing open, requests are not limited');
      }
      return;
    }
    const [allowed, remaining, waitMs] = answer as number[];
    reads.forEach((read, i) => { read.value = (answer[3 + i] as string | null) ?? null; });
    const resetSeconds = Math.ceil(waitMs / 1000);
    ctx.set('RateLimit-Limit', String(this.burst));
    ctx.set('RateLimit-Remaining', String(remaining));
    ctx.set('RateLimit-Reset', String(resetSeconds));
    if (allowed !== 1) {
      const retryAfter = String(Math.max(1, resetSeconds));
      throw new DomainError('rate_limit_exceeded', `too many requests; retry after ${retryAfter} s`, null, { 'Retry-After': retryAfter });
    }
  };
}
