// API-key principals, with their account's view, cached in Redis by key hash, so an
// authenticated request (and GET /v1/accounts/me) needs no Postgres lookup. Valid keys are
// cached, and unknown keys briefly as such (below); revoked keys take the Postgres path.
// If Redis is unavailable, lookups fall back to Postgres.
//
// A fill (the entry written after a Postgres read) races the changes that must end it: a
// request reads Postgres just before a revocation commits, and its write would land after it.
// So a slot holds either an entry (JSON) or a marker (`!…`), and:
// - a fill is conditional: it lands only if the slot still holds what the request read before
//   it asked Postgres, and never over a `!revoked:` or `!held:` marker;
// - a revocation writes `!revoked:<id>` before the Postgres change; it outlives any fill;
// - a KYB change writes `!held:<id>` on every key of the account before its Postgres change,
//   and after the commit swaps its own hold for `!stale:<id>`, which a fill may replace. A fill
//   that read anything before the hold no longer finds it; one that read the hold cannot land.
// Every marker is new (a random id), so a slot never returns to a value a fill read earlier.
// A key Postgres does not know leaves `!unknown:` in its empty slot for a short while (a negative
// cache): the same unknown key repeated costs no lookup. A revoked key, once Postgres has refused
// it under its revocation's marker, is answered from the marker too (`!revoked:<id>:refused`), so
// an unknown key and a revoked one cost the same time and a caller cannot tell them apart. Keys are made at random by the server
// and used only once it has answered, so a key missed once is never created afterwards.
// Writing a marker is the first step of the change: if Redis cannot take it, the change is not
// made and the request answers 503 service_unavailable, so the same request repeated makes it.
import type { Result } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { DomainError } from '../domain-error';
import { log } from '../log';
import type { RedisClient } from '../redis';
import { withTimeout } from '../with-timeout';
import type { AccountView } from './account-views';

export interface CachedKey {
  id: string;
  account_id: string;
  type: 'secret' | 'publishable' | 'restricted';
  scopes: string[];
  /** The account as GET /v1/accounts/me shows it; only KYB changes alter it after creation. */
  account: AccountView;
}

/**
 * What authentication read in a key's slot before it asked Postgres: the raw value (null when
 * empty), and when (performance.now()). Absent when Redis could not be read: then no fill.
 */
export interface SlotReading {
  value: string | null;
  readAtMs: number;
}

const ENTRY_TTL_SECONDS = 300;
// A fill older than FILL_AGE_MS_MAX is dropped, so markers outlive every fill that could still
// land by orders of magnitude; when one expires, Postgres already holds the change.
const FILL_AGE_MS_MAX = 10_000;
const HOLD_TTL_SECONDS = 3_600;
const REVOKED_TTL_SECONDS = 86_400;
/** A change waits this long for Redis to take its markers, then answers 503. */
const MARK_TIMEOUT_MS = 2_000;

const REVOKED = '!revoked:';
const HELD = '!held:';
const STALE = '!stale:';
const UNKNOWN = '!unknown:';
/** Ends a revocation's marker once Postgres refused the key under it: the revocation committed. */
const REFUSED = ':refused';
/** How long an unknown key is answered from its marker: short, it only spares repeated lookups. */
const UNKNOWN_TTL_SECONDS = 60;
const cacheKey = (keyHash: string) => `auth:key:v2:${keyHash}`;

// KEYS[1] the slot; ARGV expected value ('' for empty), entry, TTL. 1 when written.
const FILL = `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
  if current then return 0 end
elseif current ~= ARGV[1] then
  return 0
end
if current and (string.sub(current, 1, ${REVOKED.length}) == '${REVOKED}' or string.sub(current, 1, ${HELD.length}) == '${HELD}') then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1
`;

// KEYS the slots; ARGV marker, TTL, '1' to write over a revoked marker too. A KYB hold leaves a
// revocation's marker in place: the key is revoked whatever the account's status.
const MARK = `
for i = 1, #KEYS do
  local current = redis.call('GET', KEYS[i])
  if ARGV[3] == '1' or not (current and string.sub(current, 1, ${REVOKED.length}) == '${REVOKED}') then
    redis.call('SET', KEYS[i], ARGV[1], 'EX', ARGV[2])
  end
end
return #KEYS
`;

// KEYS the slots; ARGV the hold's marker, the stale marker, TTL. Only slots still under this
// hold: a later hold (another change not yet committed) or a revocation stays.
const RELEASE = `
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('SET', KEYS[i], ARGV[2], 'EX', ARGV[3]) end
end
return #KEYS
`;

// KEYS[1] the slot; ARGV[1] the revocation's marker read before Postgres refused the key. 1 when written.
const REFUSE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. '${REFUSED}', 'KEEPTTL')
return 1
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    keyCacheRefuse(slot: string, revokedMarker: string): Result<number, Context>;
    keyCacheFill(slot: string, expected: string, entry: string, ttlSeconds: number): Result<number, Context>;
    keyCacheMark(numberOfKeys: number, ...args: Array<string | number>): Result<number, Context>;
    keyCacheRelease(numberOfKeys: number, ...args: Array<string | number>): Result<number, Context>;
  }
}

export class KeyCache implements KeyMarks {
  constructor(private readonly redis: RedisClient) {
    redis.defineCommand('keyCacheFill', { numberOfKeys: 1, lua: FILL });
    redis.defineCommand('keyCacheMark', { lua: MARK });
    redis.defineCommand('keyCacheRelease', { lua: RELEASE });
    redis.defineCommand('keyCacheRefuse', { numberOfKeys: 1, lua: REFUSE });
  }

  /** The Redis key (without the connection's prefix) of a key hash's slot. */
  redisKey(keyHash: string): string {
    return cacheKey(keyHash);
  }

  /** The entry in a slot's value; null when empty, a marker or unreadable (Postgres is asked instead). */
  parse(raw: string | null): CachedKey | null {
    if (!raw || raw.startsWith('!')) return null;
    try {
      return JSON.parse(raw) as CachedKey;
    } catch {
      return null;
    }
  }

  /** True when the slot's value says Postgres did not know the key a moment ago. */
  /** Whether a slot's value refuses the key without a lookup: unknown, or revoked and refused since. */
  isRefused(raw: string | null): boolean {
    return raw !== null && (raw.startsWith(UNKNOWN) || (raw.startsWith(REVOKED) && raw.endsWith(REFUSED)));
  }

  /**
   * After Postgres refused a key: its empty slot says so for UNKNOWN_TTL_SECONDS, and a
   * revocation's marker read before the lookup says that the revocation committed.
   */
  markRefused(keyHash: string, reading: SlotReading): void {
    if (performance.now() - reading.readAtMs > FILL_AGE_MS_MAX) return;
    if (reading.value === null) {
      this.redis.keyCacheFill(cacheKey(keyHash), '', `${UNKNOWN}${randomUUID()}`, UNKNOWN_TTL_SECONDS).catch(() => undefined);
    } else if (reading.value.startsWith(REVOKED) && !reading.value.endsWith(REFUSED)) {
      this.redis.keyCacheRefuse(cacheKey(keyHash), reading.value).catch(() => undefined);
    }
  }

  /** Reads a slot; undefined when Redis could not be read. */
  async read(keyHash: string): Promise<SlotReading | undefined> {
    const readAtMs = performance.now();
    try {
      return { value: await this.redis.get(cacheKey(keyHash)), readAtMs };
    } catch {
      return undefined;
    }
  }

  /** Caches an entry read from Postgres, unless the slot changed since `reading` (see above). */
  fill(keyHash: string, reading: SlotReading, value: CachedKey): void {
    if (performance.now() - reading.readAtMs > FILL_AGE_MS_MAX) return;
    this.redis.keyCacheFill(cacheKey(keyHash), reading.value ?? '', JSON.stringify(value), ENTRY_TTL_SECONDS).catch(() => undefined);
  }

  /**
   * Before a revocation is written: no process may use the key from its cache again.
   * @throws DomainError service_unavailable
   */
  async markRevoked(keyHash: string): Promise<void> {
    await this.mark([keyHash], `${REVOKED}${randomUUID()}`, REVOKED_TTL_SECONDS, true);
  }

  /**
   * Before a KYB change is written: no process may use the keys' entries, nor fill them, until
   * release().
   * @throws DomainError service_unavailable
   */
  async hold(keyHashes: string[]): Promise<KeyHold> {
    const hold = { keyHashes, marker: `${HELD}${randomUUID()}` };
    await this.mark(keyHashes, hold.marker, HOLD_TTL_SECONDS, false);
    return hold;
  }

  /**
   * After the KYB change committed: the keys may be cached again. A failure leaves them held
   * (read from Postgres) until the hold expires, which is slower but right.
   */
  async release(hold: KeyHold): Promise<void> {
    if (hold.keyHashes.length === 0) return;
    try {
      await withTimeout(this.redis.keyCacheRelease(hold.keyHashes.length, ...hold.keyHashes.map(cacheKey), hold.marker, `${STALE}${randomUUID()}`, HOLD_TTL_SECONDS), MARK_TIMEOUT_MS, `no answer from Redis within ${MARK_TIMEOUT_MS} ms`);
    } catch (error) {
      log.warn({ err: error, keys: hold.keyHashes.length }, `could not release held API keys: they are read from Postgres for up to ${HOLD_TTL_SECONDS} s`);
    }
  }

  private async mark(keyHashes: string[], marker: string, ttlSeconds: number, overRevoked: boolean): Promise<void> {
    if (keyHashes.length === 0) return;
    try {
      await withTimeout(this.redis.keyCacheMark(keyHashes.length, ...keyHashes.map(cacheKey), marker, ttlSeconds, overRevoked ? '1' : '0'), MARK_TIMEOUT_MS, `no answer from Redis within ${MARK_TIMEOUT_MS} ms`);
    } catch (error) {
      log.warn({ err: error, keys: keyHashes.length }, 'the API-key cache cannot be marked: a revocation or KYB change is refused');
      throw new DomainError('service_unavailable', 'redis is unavailable, so the change could not be made to hold in every server; nothing changed: repeat the request shortly', 'redis', { 'Retry-After': '2' });
    }
  }
}

/** The hold a KYB change puts on its account's keys, released after its commit. */
export interface KeyHold {
  keyHashes: string[];
  marker: string;
}

/**
 * The API-key cache's markers (auth/key-cache.ts): written before a revocation or KYB change, so
 * that once it answers no process uses a cached identity from before it. When Redis cannot take
 * them, markRevoked and hold throw DomainError service_unavailable and the change is not made:
 * the same request repeated makes it.
 */
export interface KeyMarks {
  markRevoked(keyHash: string): Promise<void>;
  hold(keyHashes: string[]): Promise<KeyHold>;
  release(hold: KeyHold): Promise<void>;
}
