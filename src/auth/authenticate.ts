// Who is calling, and may they call this route? SPEC.md section 5, in order of precedence:
// authentication_required → environment_mismatch → invalid_api_key / token_expired /
// invalid_token → dashboard_access_denied → publishable_key_write_denied → insufficient_scope →
// account_not_active.
import type Koa from 'koa';
import { ACCOUNT_WITH_WALLET, accountWithWalletView, type AccountWithWallet } from './account-views';
import type { Config } from '../config';
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import type { Guarded, Principal } from './rules';
import { credentialDigest, digestsEqual, keyEnvironment, looksLikeApiKey, parseApiKey, type SessionTokens } from './credentials';
import type { ReadAlong } from '../guards/rate-limit';
import type { CachedKey, KeyCache, SlotReading } from './key-cache';
import type { SessionRevocations } from './session-revocations';

export interface AuthenticatedPrincipal extends Principal {
  kybStatus: string | null;
}

/**
 * An API key's cache slot, read by the rate limiter's Redis call (ReadAlong) for authentication;
 * `readAtMs` is taken before that call, so a fill's age is never understated (key-cache.ts).
 */
interface KeyLookup extends ReadAlong {
  token: string; digest: Buffer; hash: string; readAtMs: number;
  /** Set by the rate limiter's call: how long the caller's address has no credential attempt left. */
  attemptsWaitMs?: number;
}

const INVALID_KEY_MESSAGE = 'the API key is not valid';

/** The bearer credential, or null when there is none or it is not of the Bearer form. */
function bearerTokenOrNull(ctx: Koa.Context): string | null {
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(ctx.get('authorization'));
  return match ? match[1] : null;
}

function bearerToken(ctx: Koa.Context): string | null {
  if (ctx.get('authorization') === '') return null;
  const token = bearerTokenOrNull(ctx);
  if (token === null) throw new DomainError('authentication_required', 'the Authorization header must be "Bearer <credential>"', 'Authorization');
  return token;
}

export class Authenticator {
  private readonly masterKeyDigest: Buffer;

  constructor(private readonly db: Db, private readonly config: Config, private readonly sessions: SessionTokens, private readonly keys: KeyCache,
    private readonly signOuts: SessionRevocations) {
    this.masterKeyDigest = credentialDigest(config.masterKey);
  }

  async identify(token: string, lookup?: KeyLookup): Promise<AuthenticatedPrincipal> {
    // One digest of the credential serves the master-key comparison, the key lookup and the rate limiter.
    const own = lookup?.token === token ? lookup : undefined;
    const digest = own?.digest ?? credentialDigest(token);
    if (digestsEqual(digest, this.masterKeyDigest)) {
      return { kind: 'master', accountId: null, credentialId: 'master', scopes: [], isAdmin: true, kybStatus: null };
    }
    if (looksLikeApiKey(token)) return this.identifyKey(token, own?.hash ?? digest.toString('hex'), own);
    if (token.split('.').length === 3) return this.identifySession(token);
    throw new DomainError('invalid_api_key', INVALID_KEY_MESSAGE);
  }

  /**
   * For an API key, the cache entry authentication needs: the rate limiter's call reads it, so
   * a request needs one Redis round trip. Whether the key is used is still decided after the
   * rate limit: a limited caller gets its 429 and nothing else.
   */
  reads = (ctx: Koa.Context, route: Guarded): ReadAlong | null => {
    if (route.auth.kind === 'public') return null;
    const token = bearerTokenOrNull(ctx);
    if (token === null || !looksLikeApiKey(token)) return null;
    const digest = credentialDigest(token);
    const hash = digest.toString('hex');
    const lookup: KeyLookup = { token, digest, hash, key: this.keys.redisKey(hash), subject: hash.slice(0, 32), readAtMs: performance.now() };
    ctx.state.keyLookup = lookup;
    return lookup;
  };

  private async identifyKey(token: string, hash: string, lookup: KeyLookup | undefined): Promise<AuthenticatedPrincipal> {
    const environment = keyEnvironment(token);
    if (environment !== null && environment !== this.config.environment) {
      throw new DomainError('environment_mismatch', `this is a ${environment} key; this server is the ${this.config.environment} environment`);
    }
    const parsed = parseApiKey(token);
    // Unknown, malformed and revoked keys give one identical answer after one identical lookup;
    // seen again, an unknown key (within a minute) and a revoked one are answered from their
    // markers alone (key-cache.ts).
    // The rate limiter's call read the entry, unless Redis failed or the limiter is off.
    const reading: SlotReading | undefined = lookup?.value !== undefined ? { value: lookup.value, readAtMs: lookup.readAtMs } : await this.keys.read(hash);
    let cached: CachedKey | null = this.keys.parse(reading?.value ?? null);
    if (!cached && this.keys.isRefused(reading?.value ?? null)) throw new DomainError('invalid_api_key', INVALID_KEY_MESSAGE);
    if (!cached && (lookup?.attemptsWaitMs ?? 0) > 0) {
      // An address that spent its credential attempts gets no lookup of a key not cached as valid.
      const retryAfter = String(Math.max(1, Math.ceil(lookup!.attemptsWaitMs! / 1000)));
      throw new DomainError('rate_limit_exceeded', `too many refused credentials from this address; retry after ${retryAfter} s`, null, { 'Retry-After': retryAfter });
    }
    if (!cached) {
      const row: (AccountWithWallet & { key_id: string; type: CachedKey['type']; scopes: string[] }) | undefined = await this.db('api_keys')
        .join('accounts', 'accounts.id', 'api_keys.account_id')
        .leftJoin('chain_wallets', 'chain_wallets.account_id', 'accounts.id')
        .where('api_keys.key_hash', hash)
        .whereNull('api_keys.revoked_at')
        .first(['api_keys.id as key_id', 'api_keys.type', 'api_keys.scopes', ...ACCOUNT_WITH_WALLET]);
      cached = row ? { id: row.key_id, account_id: row.id, type: row.type, scopes: row.scopes, account: accountWithWalletView(row) } : null;
      // Only over what was read before Postgres was asked: a revocation or KYB change that
      // committed meanwhile has marked the slot, and the fill does not land. Without a reading
      // (Redis away) there is nothing to compare with, so no fill.
      if (cached && parsed && reading) this.keys.fill(hash, reading, cached);
      if (!cached && reading) this.keys.markRefused(hash, reading);
    }
    if (!cached || !parsed) throw new DomainError('invalid_api_key', INVALID_KEY_MESSAGE);
    return {
      kind: cached.type, accountId: cached.account_id, credentialId: cached.id, scopes: cached.scopes, isAdmin: false,
      kybStatus: cached.account.kyb_status, account: cached.account,
    };
  }

  private async identifySession(token: string): Promise<AuthenticatedPrincipal> {
    const claims = await this.sessions.verify(token);
    if (await this.signOuts.isRevoked(claims.sessionId)) throw new DomainError('invalid_token', 'the session was signed out; sign in again');
    const row: AccountWithWallet | undefined = await this.db('accounts')
      .leftJoin('chain_wallets', 'chain_wallets.account_id', 'accounts.id')
      .where('accounts.id', claims.accountId)
      .first(ACCOUNT_WITH_WALLET);
    if (!row) throw new DomainError('invalid_token', 'the session belongs to no account');
    return {
      kind: 'session', accountId: claims.accountId, credentialId: `session:${claims.accountId}`, scopes: [], isAdmin: false,
      kybStatus: row.kyb_status, account: accountWithWalletView(row), session: { id: claims.sessionId, expiresAt: claims.expiresAt },
    };
  }

  authenticate = async (ctx: Koa.Context, route: Guarded): Promise<Principal | null> => {
    const rule = route.auth;
    if (rule.kind === 'public') return null;
    const token = bearerToken(ctx);
    if (token === null) throw new DomainError('authentication_required', 'this route requires Authorization: Bearer <credential>', 'Authorization');
    const lookup = ctx.state.keyLookup as KeyLookup | undefined;
    if (lookup) lookup.attemptsWaitMs = ctx.state.attemptsWaitMs as number | undefined;
    const principal = await this.identify(token, lookup);
    ctx.state.principal = principal;
    authorize(principal, route);
    return principal;
  };
}

/** The permission rules of SPEC.md section 5 for an identified caller. */
export function authorize(principal: AuthenticatedPrincipal, route: Guarded): void {
  const rule = route.auth;
  const regularKey = principal.kind === 'secret' || principal.kind === 'publishable' || principal.kind === 'restricted';
  if ((rule.kind === 'dashboard' || rule.kind === 'session') && regularKey) {
    throw new DomainError('dashboard_access_denied', 'dashboard routes take a session token or the master key, not an API key');
  }
  if (rule.kind === 'session' && principal.kind !== 'session') {
    throw new DomainError('insufficient_scope', 'this route acts on the session that calls it: it takes a session token alone');
  }
  // SPEC.md section 5: a publishable key's write is refused as such, whatever the route.
  if (principal.kind === 'publishable' && route.method !== 'GET') {
    throw new DomainError('publishable_key_write_denied', 'publishable keys can only read; use a secret or restricted key to write');
  }
  if (rule.kind === 'admin') {
    if (!principal.isAdmin) throw new DomainError('insufficient_scope', 'this route requires the master key');
    return;
  }
  if (principal.kind === 'publishable' && rule.kind === 'key' && rule.publishable !== 'reads') {
    throw new DomainError('insufficient_scope', 'publishable keys read only what a page may show (the account, FX quotes); use a secret or restricted key, or a session');
  }
  if (rule.kind === 'key' && principal.kind === 'restricted' && rule.scope !== null && !principal.scopes.includes(rule.scope)) {
    throw new DomainError('insufficient_scope', `this restricted key lacks the ${rule.scope} scope`, rule.scope);
  }
  if (rule.kind !== 'public' && rule.moneyMoving && principal.kybStatus !== null && principal.kybStatus !== 'active') {
    throw new DomainError('account_not_active', `the account's KYB status is ${principal.kybStatus}; it must be active to move money`);
  }
}
