// Sign-in lockout per account named (issue 38): from the `freeFailures`th wrong password for one
// email on, sign-in for it is refused (429, Retry-After) for a backoff that doubles with each further
// failure, up to `maxMs`; the right password is refused too while it lasts, and costs no scrypt
// work. A successful sign-in clears the count. Kept in Redis so every API process agrees; if
// Redis is down, sign-in is not locked (as the rate limiter fails open) and the log says so.
import { createHash } from 'node:crypto';
import type { Result } from 'ioredis';
import { canonicalEmail } from '../../ledger/emails';
import { DomainError } from '../domain-error';
import { log } from '../log';
import type { RedisClient } from '../redis';
import { wallNowMs } from '../clock';

export interface LockoutSettings {
  /** The failure that starts the first lockout (each later one doubles it). */
  freeFailures: number;
  /** The first lockout; each further failure doubles it. */
  baseMs: number;
  maxMs: number;
}

// KEYS[1] the account's record. Returns ms until sign-in is allowed (0: now).
const LOCKED_FOR = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local untilMs = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
return math.max(0, untilMs - now)
`;

// KEYS[1] the account's record; ARGV free failures, base ms, max ms, record TTL ms. Counts one
// failure; returns the lockout it starts in ms (0: none yet).
const FAILED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
local over = count - tonumber(ARGV[1])
local lock = 0
if over >= 0 then
  lock = math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) * 2 ^ math.min(over, 40))
  redis.call('HSET', KEYS[1], 'until', now + lock)
end
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[4]), lock))
return lock
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    signInLockedFor(key: string): Result<number, Context>;
    signInFailed(key: string, freeFailures: number, baseMs: number, maxMs: number, ttlMs: number): Result<number, Context>;
  }
}

/** A failure count is forgotten a day after the last failure. */
const RECORD_TTL_MS = 24 * 60 * 60 * 1000;

function lockedOut(waitMs: number): DomainError {
  const retryAfter = String(Math.max(1, Math.ceil(waitMs / 1000)));
  return new DomainError('rate_limit_exceeded', `sign-in for this email is locked after repeated failed attempts; retry after ${retryAfter} s`, 'email', { 'Retry-After': retryAfter });
}

export class SignInLockout {
  private lastFailOpenLogMs = 0;

  constructor(private readonly redis: RedisClient, private readonly settings: LockoutSettings) {
    redis.defineCommand('signInLockedFor', { numberOfKeys: 1, lua: LOCKED_FOR });
    redis.defineCommand('signInFailed', { numberOfKeys: 1, lua: FAILED });
  }

  private key(email: string): string {
    return `signin:lockout:${createHash('sha256').update(canonicalEmail(email)).digest('base64url').slice(0, 22)}`;
  }

  private failOpen(error: unknown): void {
    if (wallNowMs() - this.lastFailOpenLogMs > 10_000) {
      this.lastFailOpenLogMs = wallNowMs();
      log.warn({ err: error }, 'sign-in lockout cannot reach Redis: sign-in is not locked');
    }
  }

  /**
   * Signs in through `signIn` unless the email is locked out; counts a refused password.
   * @throws DomainError rate_limit_exceeded while locked out, or whatever `signIn` throws
   */
  async guard<T>(email: string, signIn: () => Promise<T>): Promise<T> {
    const key = this.key(email);
    const waitMs = await this.redis.signInLockedFor(key).catch((error: unknown) => { this.failOpen(error); return 0; });
    if (waitMs > 0) throw lockedOut(waitMs);
    try {
      const session = await signIn();
      await this.redis.del(key).catch((error: unknown) => this.failOpen(error));
      return session;
    } catch (error) {
      if (error instanceof DomainError && error.code === 'invalid_credentials') {
        const { freeFailures, baseMs, maxMs } = this.settings;
        await this.redis.signInFailed(key, freeFailures, baseMs, maxMs, RECORD_TTL_MS).catch((failure: unknown) => { this.failOpen(failure); return 0; });
      }
      throw error;
    }
  }
}
