// One partner's OAuth 2.0 token space (SPEC.md section 5, Partner-side OAuth 2.0): client
// authentication, authorization codes, access and refresh tokens. Kept in the partner's books
// (schema.ts), so a restart of the rails forgets no grant, as a real partner's would not.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SCHEMA, sha256Hex, type PartnerBook } from './schema';
import { RailError } from './http';

/** Authorization codes expire this long after they were issued (single use besides). */
export const CODE_TTL_MS = 60_000;
/** A consent page's form must be submitted within this long (single use besides). */
export const CONSENT_TTL_MS = 10 * 60_000;

const SCOPE = 'all';
/** The client's own user on the partner (two-legged tokens act on the client's behalf). */
export const CLIENT_USER_ID = 1;
/** End users who approve three-legged authorizations are numbered from here, one per approval. */
const FIRST_END_USER_ID = 100;

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** Registered redirect URIs; the list may grow while the rails run. */
  redirectUris: string[];
}

export interface TokenGrant {
  access_token: string;
  token_type: 'bearer';
  refresh_token: string;
  expires_in: number;
  scope: typeof SCOPE;
  account_id: number;
  user_id: number;
}

export interface Principal {
  accountId: number;
  userId: number;
}

/** A checked authorization request (step 1 of the three-legged flow). */
export interface AuthorizationRequest {
  redirectUri: string;
  state: string | null;
  /** The request's query as received, which the consent form is bound to. */
  query: string;
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function opaque(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

interface PrincipalRow { account_id: string; user_id: string }

const principalOf = (row: PrincipalRow): Principal => ({ accountId: Number(row.account_id), userId: Number(row.user_id) });

export class TokenSpace {
  constructor(
    private readonly client: OAuthClient,
    private readonly tokenTtlSeconds: number,
    private readonly clientAccountId: number,
    private readonly books: PartnerBook,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Token requests authenticate the client with HTTP Basic; anything else is 401 invalid_client. */
  authenticateClient(credentials: { clientId: string; clientSecret: string } | null): void {
    const valid = credentials !== null
      && credentials.clientId === this.client.clientId
      && sameSecret(credentials.clientSecret, this.client.clientSecret);
    if (!valid) throw new RailError(401, 'invalid_client', 'client authentication failed');
  }

  /**
   * Step 1 of the three-legged flow: a request the partner will show its consent page for.
   * Checked before anything is shown, and never redirected when the redirect_uri is not the
   * client's (RFC 6749 section 4.1.2.1).
   */
  checkAuthorization(query: URLSearchParams): AuthorizationRequest {
    if (query.get('client_id') !== this.client.clientId) {
      throw new RailError(400, 'invalid_client', 'unknown client_id');
    }
    const redirectUri = query.get('redirect_uri') ?? '';
    if (!this.client.redirectUris.includes(redirectUri)) {
      throw new RailError(400, 'invalid_request', 'redirect_uri is not registered for this client');
    }
    if (query.get('response_type') !== 'code') {
      throw new RailError(400, 'unsupported_response_type', 'response_type must be "code"');
    }
    return { redirectUri, state: query.get('state'), query: query.toString() };
  }

  /** The one-time token of a consent form shown for `request`. */
  async consentFormToken(request: AuthorizationRequest): Promise<string> {
    const token = opaque('consent');
    await this.table('consent_forms').insert({ ...this.key(), token_sha256: sha256Hex(token), request: request.query, expires_at: this.at(CONSENT_TTL_MS) });
    return token;
  }

  /**
   * The person's answer on the consent page: a code for a new end user when approved, null when
   * denied. The form's token must be one this page issued for this very request, unused.
   */
  async decide(request: AuthorizationRequest, consentToken: string | null, decision: string | null): Promise<string | null> {
    // Single use: the form is spent by the first answer, whatever it is.
    const [form] = consentToken === null ? [] : await this.table('consent_forms')
      .where({ ...this.key(), token_sha256: sha256Hex(consentToken) }).delete(['request', 'expires_at']) as Array<{ request: string; expires_at: Date }>;
    if (!form || form.request !== request.query || this.nowMs() >= form.expires_at.getTime()) {
      throw new RailError(400, 'invalid_request', 'the consent form is unknown, used or expired: open the authorization page again');
    }
    if (decision === 'deny') return null;
    if (decision !== 'approve') throw new RailError(400, 'invalid_request', 'decision must be approve or deny');
    const code = opaque('code');
    await this.table('authorization_codes').insert({
      ...this.key(), code_sha256: sha256Hex(code), redirect_uri: request.redirectUri, user_id: await this.newEndUser(), expires_at: this.at(CODE_TTL_MS),
    });
    return code;
  }

  /** POST /oauth/token after client authentication: one grant per call. */
  async grant(form: URLSearchParams, query: URLSearchParams): Promise<TokenGrant> {
    const grantType = form.get('grant_type');
    switch (grantType) {
      case 'client_credentials':
        this.requireScope(form);
        return this.issue({ accountId: this.clientAccountId, userId: CLIENT_USER_ID });
      case 'authorization_code':
        this.requireScope(form);
        return this.issue(await this.redeemCode(form.get('code'), form.get('redirect_uri')));
      case 'refresh_token':
        // SPEC.md section 5 puts the refresh token in the query; the form field of RFC 6749
        // section 6 is accepted too.
        return this.issue(await this.redeemRefreshToken(query.get('refresh_token') ?? form.get('refresh_token')));
      default:
        throw new RailError(400, 'unsupported_grant_type', `grant_type "${grantType ?? ''}" is not supported`);
    }
  }

  /** The principal of a bearer token; 401 invalid_token or token_expired otherwise. */
  async verify(accessToken: string | null): Promise<Principal> {
    const found = accessToken === null ? undefined : await this.table('access_tokens')
      .where({ ...this.key(), token_sha256: sha256Hex(accessToken) }).first('account_id', 'user_id', 'expires_at') as (PrincipalRow & { expires_at: Date }) | undefined;
    if (!found) throw new RailError(401, 'invalid_token', 'the access token is not known');
    if (this.nowMs() >= found.expires_at.getTime()) throw new RailError(401, 'token_expired', 'the access token has expired');
    return principalOf(found);
  }

  /** Sandbox control: every access token expires now (refresh tokens stay valid). */
  async expireAccessTokens(): Promise<number> {
    const now = new Date(this.nowMs());
    await this.table('access_tokens').where(this.key()).where('expires_at', '>', now).update({ expires_at: now });
    const [{ count }] = await this.table('access_tokens').where(this.key()).count({ count: '*' });
    return Number(count);
  }

  /** Forgets what can no longer be used: expired access tokens, codes and consent forms. */
  async forgetExpired(): Promise<void> {
    const now = new Date(this.nowMs());
    for (const table of ['access_tokens', 'authorization_codes', 'consent_forms']) {
      await this.table(table).where(this.key()).where('expires_at', '<', now).delete();
    }
  }

  private requireScope(form: URLSearchParams): void {
    const scope = form.get('scope');
    if (scope !== null && scope !== SCOPE) throw new RailError(400, 'invalid_scope', `scope must be "${SCOPE}"`);
  }

  private async redeemCode(code: string | null, redirectUri: string | null): Promise<Principal> {
    // Single use: the code is spent by the first attempt to redeem it, successful or not.
    const [found] = code === null ? [] : await this.table('authorization_codes')
      .where({ ...this.key(), code_sha256: sha256Hex(code) }).delete(['redirect_uri', 'user_id', 'expires_at']) as Array<{ redirect_uri: string; user_id: string; expires_at: Date }>;
    if (!found) throw new RailError(400, 'invalid_grant', 'authorization code is unknown or already used');
    if (this.nowMs() >= found.expires_at.getTime()) throw new RailError(400, 'invalid_grant', 'authorization code has expired');
    if (redirectUri !== found.redirect_uri) {
      throw new RailError(400, 'invalid_grant', 'redirect_uri differs from the one the code was issued for');
    }
    return { accountId: this.clientAccountId + 1000, userId: Number(found.user_id) };
  }

  private async redeemRefreshToken(refreshToken: string | null): Promise<Principal> {
    // Rotation: a refresh token is good for one renewal.
    const [found] = refreshToken === null ? [] : await this.table('refresh_tokens')
      .where({ ...this.key(), token_sha256: sha256Hex(refreshToken) }).delete(['account_id', 'user_id']) as PrincipalRow[];
    if (!found) throw new RailError(400, 'invalid_grant', 'refresh token is unknown or already used');
    return principalOf(found);
  }

  private async issue(principal: Principal): Promise<TokenGrant> {
    const accessToken = opaque('at');
    const refreshToken = opaque('rt');
    const owner = { ...this.key(), account_id: principal.accountId, user_id: principal.userId };
    await this.books.db.transaction(async (trx) => {
      await trx(`${SCHEMA}.access_tokens`).insert({ ...owner, token_sha256: sha256Hex(accessToken), expires_at: this.at(this.tokenTtlSeconds * 1000) });
      await trx(`${SCHEMA}.refresh_tokens`).insert({ ...owner, token_sha256: sha256Hex(refreshToken), issued_at: this.at(0) });
    });
    return {
      access_token: accessToken,
      token_type: 'bearer',
      refresh_token: refreshToken,
      expires_in: this.tokenTtlSeconds,
      scope: SCOPE,
      account_id: principal.accountId,
      user_id: principal.userId,
    };
  }

  /** The next end user of this partner, numbered from FIRST_END_USER_ID. */
  private async newEndUser(): Promise<number> {
    const { rows } = await this.books.db.raw<{ rows: Array<{ last_user_id: string }> }>(`
      INSERT INTO ${SCHEMA}.end_user_counters AS c (book, partner, last_user_id) VALUES (?, ?, ?)
      ON CONFLICT (book, partner) DO UPDATE SET last_user_id = c.last_user_id + 1
      RETURNING last_user_id`, [this.books.book, this.books.partner, FIRST_END_USER_ID]);
    return Number(rows[0].last_user_id);
  }

  private table(name: string) {
    return this.books.db(`${SCHEMA}.${name}`);
  }

  private key(): { book: string; partner: string } {
    return { book: this.books.book, partner: this.books.partner };
  }

  private at(afterMs: number): Date {
    return new Date(this.nowMs() + afterMs);
  }
}
