// One partner's OAuth 2.0 token space (SPEC.md section 5, Partner-side OAuth 2.0): client
// authentication, authorization codes, access and refresh tokens. Memory only: the mock rails
// stand for an outside system, and a restart of the sandbox simply forgets every token.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { setBounded } from './bounded';
import { RailError } from './http';

/** Authorization codes expire this long after they were issued (single use besides). */
export const CODE_TTL_MS = 60_000;
/** A consent page's form must be submitted within this long (single use besides). */
export const CONSENT_TTL_MS = 10 * 60_000;
/** Bound of each token table; past it the oldest entry is forgotten. */
export const TOKENS_MAX = 10_000;

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

interface AccessToken extends Principal {
  expiresAtMs: number;
}

interface AuthorizationCode {
  redirectUri: string;
  userId: number;
  expiresAtMs: number;
}

/** A consent page shown for one authorization request: its form is good once, for that request. */
interface ConsentForm {
  request: string;
  expiresAtMs: number;
}

/** A checked authorization request (step 1 of the three-legged flow). */
export interface AuthorizationRequest {
  redirectUri: string;
  state: string | null;
  /** The request's query as received, which the consent form is bound to. */
  query: string;
}

function remember<V>(table: Map<string, V>, key: string, value: V): void {
  setBounded(table, key, value, TOKENS_MAX);
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function opaque(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

export class TokenSpace {
  private readonly accessTokens = new Map<string, AccessToken>();
  private readonly refreshTokens = new Map<string, Principal>();
  private readonly codes = new Map<string, AuthorizationCode>();
  private readonly consentForms = new Map<string, ConsentForm>();
  private nextEndUserId = FIRST_END_USER_ID;

  constructor(
    private readonly client: OAuthClient,
    private readonly tokenTtlSeconds: number,
    private readonly clientAccountId: number,
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
  consentFormToken(request: AuthorizationRequest): string {
    const token = opaque('consent');
    remember(this.consentForms, token, { request: request.query, expiresAtMs: this.nowMs() + CONSENT_TTL_MS });
    return token;
  }

  /**
   * The person's answer on the consent page: a code for a new end user when approved, null when
   * denied. The form's token must be one this page issued for this very request, unused.
   */
  decide(request: AuthorizationRequest, consentToken: string | null, decision: string | null): string | null {
    const form = consentToken === null ? undefined : this.consentForms.get(consentToken);
    if (consentToken !== null) this.consentForms.delete(consentToken);
    if (!form || form.request !== request.query || this.nowMs() >= form.expiresAtMs) {
      throw new RailError(400, 'invalid_request', 'the consent form is unknown, used or expired: open the authorization page again');
    }
    if (decision === 'deny') return null;
    if (decision !== 'approve') throw new RailError(400, 'invalid_request', 'decision must be approve or deny');
    const code = opaque('code');
    remember(this.codes, code, { redirectUri: request.redirectUri, userId: this.nextEndUserId++, expiresAtMs: this.nowMs() + CODE_TTL_MS });
    return code;
  }

  /** POST /oauth/token after client authentication: one grant per call. */
  grant(form: URLSearchParams, query: URLSearchParams): TokenGrant {
    const grantType = form.get('grant_type');
    switch (grantType) {
      case 'client_credentials':
        this.requireScope(form);
        return this.issue({ accountId: this.clientAccountId, userId: CLIENT_USER_ID });
      case 'authorization_code':
        this.requireScope(form);
        return this.issue(this.redeemCode(form.get('code'), form.get('redirect_uri')));
      case 'refresh_token':
        // SPEC.md section 5 puts the refresh token in the query; the form field of RFC 6749
        // section 6 is accepted too.
        return this.issue(this.redeemRefreshToken(query.get('refresh_token') ?? form.get('refresh_token')));
      default:
        throw new RailError(400, 'unsupported_grant_type', `grant_type "${grantType ?? ''}" is not supported`);
    }
  }

  /** The principal of a bearer token; 401 invalid_token or token_expired otherwise. */
  verify(accessToken: string | null): Principal {
    const found = accessToken === null ? undefined : this.accessTokens.get(accessToken);
    if (!found) throw new RailError(401, 'invalid_token', 'the access token is not known');
    if (this.nowMs() >= found.expiresAtMs) throw new RailError(401, 'token_expired', 'the access token has expired');
    return { accountId: found.accountId, userId: found.userId };
  }

  /** Sandbox control: every access token expires now (refresh tokens stay valid). */
  expireAccessTokens(): number {
    const now = this.nowMs();
    for (const token of this.accessTokens.values()) token.expiresAtMs = Math.min(token.expiresAtMs, now);
    return this.accessTokens.size;
  }

  private requireScope(form: URLSearchParams): void {
    const scope = form.get('scope');
    if (scope !== null && scope !== SCOPE) throw new RailError(400, 'invalid_scope', `scope must be "${SCOPE}"`);
  }

  private redeemCode(code: string | null, redirectUri: string | null): Principal {
    const found = code === null ? undefined : this.codes.get(code);
    // Single use: the code is spent by the first attempt to redeem it, successful or not.
    if (code !== null) this.codes.delete(code);
    if (!found) throw new RailError(400, 'invalid_grant', 'authorization code is unknown or already used');
    if (this.nowMs() >= found.expiresAtMs) throw new RailError(400, 'invalid_grant', 'authorization code has expired');
    if (redirectUri !== found.redirectUri) {
      throw new RailError(400, 'invalid_grant', 'redirect_uri differs from the one the code was issued for');
    }
    return { accountId: this.clientAccountId + 1000, userId: found.userId };
  }

  private redeemRefreshToken(refreshToken: string | null): Principal {
    const found = refreshToken === null ? undefined : this.refreshTokens.get(refreshToken);
    if (refreshToken === null || !found) throw new RailError(400, 'invalid_grant', 'refresh token is unknown or already used');
    // Rotation: a refresh token is good for one renewal.
    this.refreshTokens.delete(refreshToken);
    return found;
  }

  private issue(principal: Principal): TokenGrant {
    const accessToken = opaque('at');
    const refreshToken = opaque('rt');
    remember(this.accessTokens, accessToken, { ...principal, expiresAtMs: this.nowMs() + this.tokenTtlSeconds * 1000 });
    remember(this.refreshTokens, refreshToken, principal);
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
}
