// Who is calling, and may they call this route? SPEC.md section 5, in order of precedence:
// authentication_required → environment_mismatch → invalid_api_key / token_expired /
// invalid_token → dashboard_access_denied → publishable_key_write_denied → insufficient_scope →
// account_not_active.
import type Koa from 'koa';
import type { Config } from '../config';
import type { Db } from '../db';
import { DomainError } from '../errors';
import type { Principal, RouteDef } from '../http/route';
import { constantTimeEquals, hashApiKey, looksLikeApiKey, parseApiKey, type SessionTokens } from './credentials';
import type { CachedKey, KeyCache } from './key-cache';

export interface AuthenticatedPrincipal extends Principal {
  kybStatus: string | null;
}

const INVALID_KEY_MESSAGE = 'the API key is not valid';

function bearerToken(ctx: Koa.Context): string | null {
  const header = ctx.get('authorization');
  if (header === '') return null;
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
  if (!match) throw new DomainError('authentication_required', 'the Authorization header must be "Bearer <credential>"', 'Authorization');
  return match[1];
}

export class Authenticator {
  constructor(private readonly db: Db, private readonly config: Config, private readonly sessions: SessionTokens, private readonly keys: KeyCache) {}

  async identify(token: string): Promise<AuthenticatedPrincipal> {
    if (constantTimeEquals(token, this.config.masterKey)) {
      return { kind: 'master', accountId: null, credentialId: 'master', scopes: [], isAdmin: true, kybStatus: null };
    }
    if (looksLikeApiKey(token)) return this.identifyKey(token);
    if (token.split('.').length === 3) return this.identifySession(token);
    throw new DomainError('invalid_api_key', INVALID_KEY_MESSAGE);
  }

  private async identifyKey(token: string): Promise<AuthenticatedPrincipal> {
    const parsed = parseApiKey(token);
    if (parsed && parsed.environment !== this.config.environment) {
      throw new DomainError('environment_mismatch', `this is a ${parsed.environment} key; this server is the ${this.config.environment} environment`);
    }
    // Unknown, malformed and revoked keys give one identical answer after one identical lookup.
    const hash = hashApiKey(token);
    let row: CachedKey | null | undefined = await this.keys.get(hash);
    if (!row) {
      row = await this.db('api_keys')
        .join('accounts', 'accounts.id', 'api_keys.account_id')
        .where('api_keys.key_hash', hash)
        .whereNull('api_keys.revoked_at')
        .first('api_keys.id', 'api_keys.account_id', 'api_keys.type', 'api_keys.scopes', 'accounts.kyb_status');
      if (row && parsed) this.keys.remember(hash, row);
    }
    if (!row || !parsed) throw new DomainError('invalid_api_key', INVALID_KEY_MESSAGE);
    return { kind: row.type, accountId: row.account_id, credentialId: row.id, scopes: row.scopes, isAdmin: false, kybStatus: row.kyb_status };
  }

  private async identifySession(token: string): Promise<AuthenticatedPrincipal> {
    const claims = await this.sessions.verify(token);
    const account: { kyb_status: string } | undefined = await this.db('accounts').where('id', claims.accountId).first('kyb_status');
    if (!account) throw new DomainError('invalid_token', 'the session belongs to no account');
    return { kind: 'session', accountId: claims.accountId, credentialId: `session:${claims.accountId}`, scopes: [], isAdmin: false, kybStatus: account.kyb_status };
  }

  authenticate = async (ctx: Koa.Context, route: RouteDef): Promise<Principal | null> => {
    const rule = route.auth;
    if (rule.kind === 'public') return null;
    const token = bearerToken(ctx);
    if (token === null) throw new DomainError('authentication_required', 'this route requires Authorization: Bearer <credential>', 'Authorization');
    const principal = await this.identify(token);
    ctx.state.principal = principal;
    authorize(principal, route);
    return principal;
  };
}

/** The permission rules of SPEC.md section 5 for an identified caller. */
export function authorize(principal: AuthenticatedPrincipal, route: RouteDef): void {
  const rule = route.auth;
  const regularKey = principal.kind === 'secret' || principal.kind === 'publishable' || principal.kind === 'restricted';
  if (rule.kind === 'admin') {
    if (!principal.isAdmin) throw new DomainError('insufficient_scope', 'this route requires the master key');
    return;
  }
  if (rule.kind === 'dashboard' && regularKey) {
    throw new DomainError('dashboard_access_denied', 'dashboard routes take a session token or the master key, not an API key');
  }
  if (principal.kind === 'publishable' && route.method !== 'GET') {
    throw new DomainError('publishable_key_write_denied', 'publishable keys can only read; use a secret or restricted key to write');
  }
  if (rule.kind === 'key' && principal.kind === 'restricted' && rule.scope !== null && !principal.scopes.includes(rule.scope)) {
    throw new DomainError('insufficient_scope', `this restricted key lacks the ${rule.scope} scope`, rule.scope);
  }
  if (rule.kind !== 'public' && rule.moneyMoving && principal.kybStatus !== null && principal.kybStatus !== 'active') {
    throw new DomainError('account_not_active', `the account's KYB status is ${principal.kybStatus}; it must be active to move money`);
  }
}
