// Per-credential token bucket in Redis: one atomic script call per request. Public routes are
// limited per client address, and credential attempts (sign-in, sign-up, a refused credential)
// per address and per account named, in buckets of their own (issue 38). If Redis is down the
// limiter lets requests through (fails open) and says so in the log; nothing else depends on it.
import { createHash } from 'node:crypto';
import type Koa from 'koa';
import type { Result } from 'ioredis';
import { canonicalEmail } from '../../ledger/emails';
import { DomainError } from '../domain-error';
import { log } from '../log';
import type { RedisClient } from '../redis';
import { wallNowMs } from '../clock';

// KEYS[1] bucket, KEYS[2] the caller's address's bucket of credential attempts (peeked, not
// taken from), KEYS[3..] keys to read in the same call; ARGV rate per second, burst, then the
// attempts bucket's rate and burst. Time comes from the Redis server, so every API process sees
// one clock. Returns {allowed, tokens left, ms until one token, ms until the attempts bucket has
// one (0: it has), then the value of each key to read, or false}.
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
local attemptsWait = 0
local attemptRate = tonumber(ARGV[3])
if attemptRate > 0 then
  local attempts = redis.call('HMGET', KEYS[2], 'tokens', 'at')
  local left = tonumber(attempts[1])
  if left then
    left = math.min(tonumber(ARGV[4]), left + math.max(0, now - tonumber(attempts[2])) * attemptRate / 1000)
    if left < 1 then attemptsWait = math.ceil((1 - left) * 1000 / attemptRate) end
  end
end
local answer = {allowed, math.floor(tokens), wait, attemptsWait}
for i = 3, #KEYS do answer[i + 2] = redis.call('GET', KEYS[i]) end
return answer
`;

// KEYS the buckets to take one token from, all or none; ARGV rate per second, burst. Returns
// {allowed, ms until every bucket has a token}.
const TAKE_ALL = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local levels = {}
local wait = 0
for i = 1, #KEYS do
  local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tokens = tonumber(state[1]) or burst
  local at = tonumber(state[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
  levels[i] = tokens
  if tokens < 1 then wait = math.max(wait, math.ceil((1 - tokens) * 1000 / rate)) end
end
local allowed = 0
if wait == 0 then allowed = 1 end
for i = 1, #KEYS do
  local tokens = levels[i]
  if allowed == 1 then tokens = tokens - 1 end
  redis.call('HSET', KEYS[i], 'tokens', tostring(tokens), 'at', now)
  redis.call('PEXPIRE', KEYS[i], math.ceil(burst * 1000 / rate) + 1000)
end
return {allowed, wait}
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
    /** numberOfKeys, the bucket, the attempts bucket, the keys to read, rate, burst, attempts rate, attempts burst. */
    takeTokenAndRead(...args: Array<string | number>): Result<Array<number | string | null>, Context>;
    /** numberOfKeys, the buckets, rate, burst. */
    takeTokenFromAll(...args: Array<string | number>): Result<number[], Context>;
  }
}

/**
 * The limit on credential attempts, per client address and per account named: sign-in and
 * sign-up (each request), and any request whose credential is refused (SPEC.md section 7).
 */
export interface AttemptLimit {
  ratePerSecond: number;
  burst: number;
}

/** Why a request answers 429; the seconds to wait are at least one. */
function limited(message: string, waitMs: number, field: string | null = null): DomainError {
  const retryAfter = String(Math.max(1, Math.ceil(waitMs / 1000)));
  return new DomainError('rate_limit_exceeded', `${message}; retry after ${retryAfter} s`, field, { 'Retry-After': retryAfter });
}

const digestOf = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

export class RateLimiter {
  private lastFailOpenLogMs = 0;

  constructor(private readonly redis: RedisClient, private readonly ratePerSecond: number, private readonly burst: number,
    private readonly attempts: AttemptLimit = { ratePerSecond: 0, burst: 0 }) {
    redis.defineCommand('takeTokenAndRead', { lua: TOKEN_BUCKET });
    redis.defineCommand('takeTokenFromAll', { lua: TAKE_ALL });
  }

  /** Loads the limiter's scripts into Redis (their first calls would), on buckets of their own. */
  async warm(): Promise<void> {
    await this.redis.takeTokenAndRead(2, `rl:warm-up:${process.pid}`, `rl:warm-up:${process.pid}:attempts`, 1, 1, 0, 0);
    await this.redis.takeTokenFromAll(1, `rl:warm-up:${process.pid}:all`, 1, 1);
  }

  private attemptsBucket(ctx: Koa.Context): string {
    return `rl:attempts:ip:${ctx.ip}`;
  }

  private failOpen(error: unknown): void {
    if (wallNowMs() - this.lastFailOpenLogMs > 10_000) {
      this.lastFailOpenLogMs = wallNowMs();
      log.warn({ err: error }, 'rate limiter cannot reach Redis: failing open, requests are not limited');
    }
  }

  /**
   * One credential attempt of the caller's address and, when the request names one, of the
   * account (an email): sign-in and sign-up take one on every request; other routes when their
   * credential is refused. 429 when either has none left.
   */
  attempt = async (ctx: Koa.Context, account: string | null = null): Promise<void> => {
    if (this.attempts.ratePerSecond === 0) return;
    const buckets = [this.attemptsBucket(ctx)];
    if (account !== null) buckets.push(`rl:attempts:account:${digestOf(canonicalEmail(account))}`);
    let answer: number[];
    try {
      answer = await this.redis.takeTokenFromAll(buckets.length, ...buckets, this.attempts.ratePerSecond, this.attempts.burst);
    } catch (error) {
      this.failOpen(error);
      return;
    }
    const [allowed, waitMs] = answer;
    if (allowed !== 1) throw limited('too many credential attempts from this address or for this account', waitMs);
  };

  /**
   * Runs before authentication, keyed by a hash of the presented credential: a caller is
   * limited per credential, and guessing keys is limited too. `reads` names keys the request
   * will need (a cached API key, a cached answer): they are read in the same call and each value
   * (null when absent) stored in it; left undefined when Redis could not be asked. The first
   * read's subject, when it has one, names the bucket. A public route ignores the credential
   * sent (it is not checked, so a new one per request would be a new bucket): the caller's
   * address names its bucket. The same call peeks at the address's credential attempts: when it
   * has none left, `ctx.state.attemptsWaitMs` says for how long, and a credential that would need
   * a database lookup is refused before it (authenticate.ts).
   */
  limit = async (ctx: Koa.Context, reads: ReadAlong[] = [], publicRoute = false): Promise<void> => {
    if (this.ratePerSecond === 0) return; // 0 turns the limiter off
    const credential = publicRoute ? '' : ctx.get('authorization');
    const named = publicRoute ? undefined : reads[0]?.subject;
    const subject = named ? `key:${named}` : credential ? `cred:${digestOf(credential)}` : `ip:${ctx.ip}`;
    let answer: Array<number | string | null>;
    try {
      answer = await this.redis.takeTokenAndRead(2 + reads.length, `rl:${subject}`, this.attemptsBucket(ctx), ...reads.map((r) => r.key),
        this.ratePerSecond, this.burst, this.attempts.ratePerSecond, this.attempts.burst);
    } catch (error) {
      this.failOpen(error);
      return;
    }
    const [allowed, remaining, waitMs, attemptsWaitMs] = answer as number[];
    ctx.state.attemptsWaitMs = attemptsWaitMs;
    reads.forEach((read, i) => { read.value = (answer[4 + i] as string | null) ?? null; });
    const resetSeconds = Math.ceil(waitMs / 1000);
    ctx.set('RateLimit-Limit', String(this.burst));
    ctx.set('RateLimit-Remaining', String(remaining));
    ctx.set('RateLimit-Reset', String(resetSeconds));
    if (allowed !== 1) throw limited('too many requests', Math.max(1, resetSeconds) * 1000);
  };
}
