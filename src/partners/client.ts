// A client of one partner's payments API behind OAuth 2.0 (SPEC.md section 5, Partner-side
// OAuth 2.0). It holds one access token per instance, renews it before it expires and once on a
// 401 (after one plain retry when the 401 says "Invalid token"), and retries only what may succeed later (503, network failure, timeout) a bounded number
// of times. Resubmitting a payment is safe because the partner deduplicates by `reference`.
// Everything a partner answers is screened (screen.ts) before a caller sees it: free text
// cleaned and bounded, identifiers and links of their shape, or the answer is `unexpected`.
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '../log';
import { AdaptiveCallLimit } from './call-limit';
import { exchange } from './exchange';
import { isPartnerError, PartnerError } from './errors';
import { isRecord, parsePayment, unexpectedAnswer, type PartnerPayment } from './answers';
import { screenedCurrency, screenedId, screenedText } from './screen';
import type { SandboxScenario } from './scenarios';
import { wallNowMs } from '../clock';

export type { PartnerPayment, PartnerPaymentStatus } from './answers';

/** A line of a partner's settlement statement (src/mock-rails/statements.ts shows one partner's). */
export interface PartnerStatementLine {
  id: string;
  /** The partner's payment id, or a batch's reference. */
  reference: string;
  /** Signed: positive credits the client, negative debits it. */
  amount: string;
  fee: string;
  /** amount − fee. */
  net: string;
  currency: string;
  value_date: string;
  /** A batch line: the partner's payment ids it settles. */
  settles?: string[];
}

export interface PartnerStatement { date: string; final: boolean; lines: PartnerStatementLine[] }

export interface PartnerPaymentRequest {
  /** Our idempotency reference: the partner returns the same payment for the same reference. */
  reference: string;
  /** Decimal string, e.g. "10.00". */
  amount: string;
  currency: string;
  beneficiary?: object;
  metadata?: object;
  /** A sandbox failure the partner should act out (scenarios.ts); none: the payment runs normally. */
  scenario?: SandboxScenario;
}

/** A return of part of a payment the partner made: `amount` in its currency, under our reference. */
export type PartnerReturnRequest = Omit<PartnerPaymentRequest, 'beneficiary' | 'metadata'>;

export interface PartnerClientOptions {
  /** The partner's base address, e.g. http://127.0.0.1:4000/fiat (no trailing slash needed). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Bound of one HTTP exchange, body included. */
  timeoutMs?: number;
  /** Attempts of one call when the partner is unavailable (503, network, timeout). */
  attemptsMax?: number;
  backoffMsInitial?: number;
  backoffMsMax?: number;
  /** Most calls in flight to the partner at once while it answers in time (call-limit.ts). */
  callsInFlightMax?: number;
}

/** A token response of the partner's token endpoint. */
interface TokenGrant { accessToken: string; refreshToken: string | null; expiresInMs: number; userId: number | null }

/** A source of a customer's funds on the partner. */
export interface FundingMethod { external_id: string; kind: 'bank' | 'viban' | 'wallet'; currency: string; label: string; default: boolean }

/** The tokens of one customer's consent on the partner. */
export interface UserTokens { accessToken: string; refreshToken: string; expiresInMs: number; userId: number }

interface CachedToken {
  accessToken: string;
  refreshToken: string | null;
  /** When to renew: shortly before the partner's expires_in elapses. */
  renewAtMs: number;
}

const TIMEOUT_MS_DEFAULT = 5_000;
/** As many as the dispatcher runs at once (consumers/partners/dispatcher.ts CONCURRENCY_MAX_DEFAULT). */
const CALLS_IN_FLIGHT_MAX_DEFAULT = 64;
const ATTEMPTS_MAX_DEFAULT = 5;
const BACKOFF_MS_INITIAL_DEFAULT = 50;
const BACKOFF_MS_MAX_DEFAULT = 2_000;
/** Renew this share of the token lifetime early, and never more than RENEW_EARLY_MS_MAX. */
const RENEW_EARLY_SHARE = 0.1;
const RENEW_EARLY_MS_MAX = 30_000;
const FUNDING_KINDS: readonly string[] = ['bank', 'viban', 'wallet'];

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < 1) throw new Error(`PartnerClient option ${name} must be a positive integer, got ${chosen}`);
  return chosen;
}

export class PartnerClient {
  private readonly baseUrl: string;
  private readonly basicAuthorization: string;
  private readonly timeoutMs: number;
  private readonly attemptsMax: number;
  private readonly backoffMsInitial: number;
  private readonly backoffMsMax: number;
  private readonly calls: AdaptiveCallLimit;
  private token: CachedToken | null = null;
  /** The one token request in flight; concurrent callers wait for it instead of sending their own. */
  private tokenInFlight: Promise<CachedToken> | null = null;

  constructor(options: PartnerClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.basicAuthorization = `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`;
    this.timeoutMs = positiveInteger('timeoutMs', options.timeoutMs, TIMEOUT_MS_DEFAULT);
    this.attemptsMax = positiveInteger('attemptsMax', options.attemptsMax, ATTEMPTS_MAX_DEFAULT);
    this.backoffMsInitial = positiveInteger('backoffMsInitial', options.backoffMsInitial, BACKOFF_MS_INITIAL_DEFAULT);
    this.backoffMsMax = positiveInteger('backoffMsMax', options.backoffMsMax, BACKOFF_MS_MAX_DEFAULT);
    this.calls = new AdaptiveCallLimit(positiveInteger('callsInFlightMax', options.callsInFlightMax, CALLS_IN_FLIGHT_MAX_DEFAULT));
  }

  /** How many calls the partner is sent at once now (it falls while the partner does not answer in time). */
  get callsInFlightLimit(): number {
    return this.calls.current;
  }

  /**
   * Submits a payment (or finds the one already submitted under `request.reference`).
   * Raises PartnerError: declined (422), unavailable (503 after every attempt, network, timeout),
   * rejected (other 4xx, including a 401 that survives one token renewal), unexpected (other 5xx,
   * unreadable answer: the payment may exist, so look it up by resubmitting the same reference).
   */
  async submitPayment(request: PartnerPaymentRequest): Promise<PartnerPayment> {
    const what = `submit payment ${request.reference}`;
    return parsePayment(what, await this.callApi(what, 'POST', '/v1/payments', request), request.reference);
  }

  /**
   * Asks the partner to return part of the payment `paymentId` it made (or finds the return already
   * asked for under `request.reference`): a payment of its own, followed as any. Raises PartnerError
   * as submitPayment does; a return the partner refuses (more than is left of the payment, a
   * payment not completed) is `rejected`.
   */
  async submitReturn(paymentId: string, request: PartnerReturnRequest): Promise<PartnerPayment> {
    const what = `submit return ${request.reference}`;
    return parsePayment(what, await this.callApi(what, 'POST', `/v1/payments/${encodeURIComponent(paymentId)}/returns`, request), request.reference);
  }

  /**
   * The funding methods of the customer a link's `accessToken` acts for. Raises PartnerError; a
   * 401 is the caller's to resolve (src/partner-links/links.ts), as the token is the customer's.
   */
  async listFundingMethods(accessToken: string): Promise<FundingMethod[]> {
    const what = 'list funding methods';
    const payload = await this.callAs(what, accessToken, 'GET', '/v1/funding-methods');
    const methods = isRecord(payload) && Array.isArray(payload.data) ? payload.data : null;
    const valid = methods?.every((m) => isRecord(m) && screenedId(m.external_id) !== null && FUNDING_KINDS.includes(m.kind as string)
      && screenedCurrency(m.currency) !== null && typeof m.label === 'string' && typeof m.default === 'boolean');
    if (!methods || !valid) throw unexpectedAnswer(what, 'the partner answered with something that is not a list of funding methods');
    return (methods as FundingMethod[]).map((m) => ({ external_id: m.external_id, kind: m.kind, currency: m.currency, label: screenedText(m.label), default: m.default }));
  }

  /**
   * Submits a payment on behalf of the customer whose link token this is (see submitPayment);
   * `sent.submissions` counts each submission made, retries included.
   */
  async submitPaymentAs(accessToken: string, request: PartnerPaymentRequest, sent: { submissions: number } = { submissions: 0 }): Promise<PartnerPayment> {
    const what = `submit payment ${request.reference}`;
    return parsePayment(what, await this.callAs(what, accessToken, 'POST', '/v1/payments', request, () => { sent.submissions += 1; }), request.reference);
  }

  /** A payment submitted with a customer's link token, as the partner sees it now. */
  async getPaymentAs(accessToken: string, id: string): Promise<PartnerPayment> {
    const what = `get payment ${id}`;
    return parsePayment(what, await this.callAs(what, accessToken, 'GET', `/v1/payments/${encodeURIComponent(id)}`));
  }

  /** One call with a customer's token, retried while the partner is unavailable; a 401 is the caller's. */
  private callAs(what: string, accessToken: string, method: 'GET' | 'POST', path: string, body?: unknown, onAttempt: () => void = () => undefined): Promise<unknown> {
    const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return this.withRetries(what, () => {
      onAttempt();
      return this.exchange(what, `${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    });
  }

  /**
   * The partner's settlement statement of one value date (YYYY-MM-DD), read with the client's own
   * token a page of `pageSize` lines at a time, so a busy day is never held whole. Raises
   * PartnerError; an answer that is not a page of that statement is `unexpected`.
   */
  async *statementPages(date: string, pageSize: number): AsyncGenerator<PartnerStatement> {
    for (let cursor: string | null = null, first = true; first || cursor !== null; first = false) {
      const what = cursor === null ? `get statement ${date}` : `get statement ${date} from ${cursor}`;
      const goOn = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const payload = await this.callApi(what, 'GET', `/v1/statements/${encodeURIComponent(date)}?limit=${pageSize}${goOn}`);
      const lines = isRecord(payload) && Array.isArray(payload.lines) ? payload.lines : null;
      const valid = lines?.every((l) => isRecord(l) && ['id', 'reference', 'amount', 'fee', 'net', 'currency', 'value_date'].every((f) => typeof l[f] === 'string')
        && screenedId(l.id) !== null && screenedId(l.reference) !== null && (l.settles === undefined || (Array.isArray(l.settles) && l.settles.every((r) => screenedId(r) !== null))));
      const next = isRecord(payload) ? payload.next_cursor : undefined;
      if (!lines || !valid || !isRecord(payload) || payload.date !== date || (next !== null && typeof next !== 'string')) {
        throw unexpectedAnswer(what, 'the partner answered with something that is not a page of the statement of that date');
      }
      yield { date, final: payload.final === true, lines: lines as PartnerStatementLine[] };
      cursor = next as string | null;
    }
  }

  /** The partner's current view of a payment. Raises PartnerError (rejected 404 for an unknown id). */
  async getPayment(id: string): Promise<PartnerPayment> {
    const what = `get payment ${id}`;
    return parsePayment(what, await this.callApi(what, 'GET', `/v1/payments/${encodeURIComponent(id)}`));
  }

  /**
   * What the partner holds under our `reference` (read with the client's own token): the payment,
   * or null when it confirms it holds none (404). Raises PartnerError otherwise: an unavailable
   * partner confirms nothing. How an unanswered submission is settled before anything is failed.
   */
  async findPaymentByReference(reference: string): Promise<PartnerPayment | null> {
    const what = `find payment ${reference}`;
    try {
      return parsePayment(what, await this.callApi(what, 'GET', `/v1/payments?reference=${encodeURIComponent(reference)}`), reference);
    } catch (error) {
      if (isPartnerError(error) && error.httpStatus === 404 && error.partnerCode === 'not_found') return null;
      throw error;
    }
  }

  /** One API call: bounded retries, and on a 401 one token renewal and one more try. */
  private async callApi(what: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const state: { tokenUsed: CachedToken | null; tokenRefused: boolean } = { tokenUsed: null, tokenRefused: false };
    const attempt = async (): Promise<unknown> => {
      state.tokenRefused = false;
      state.tokenUsed = await this.currentToken();
      const headers: Record<string, string> = { authorization: `Bearer ${state.tokenUsed.accessToken}`, accept: 'application/json' };
      if (body !== undefined) headers['content-type'] = 'application/json';
      try {
        return await this.exchange(what, `${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (error) {
        state.tokenRefused = isPartnerError(error) && error.httpStatus === 401;
        throw error;
      }
    };
    try {
      return await this.withRetries(what, attempt);
    } catch (error) {
      if (!state.tokenRefused || state.tokenUsed === null) throw error;
      // SPEC.md section 5: "Invalid token" is resolved by retrying the authenticated call first
      // (partners refuse good tokens now and then), then by renewing the token. The call is safe
      // to repeat: a payment is deduplicated by its reference, and a read changes nothing.
      if (isPartnerError(error) && error.partnerCode === 'invalid_token') {
        log.debug({ partner: this.baseUrl, what }, 'partner answered "Invalid token"; retrying the call before renewing');
        try {
          return await this.withRetries(what, attempt);
        } catch (again) {
          if (!state.tokenRefused) throw again;
        }
      }
      // An expired token, or one refused again: renew once.
      log.debug({ partner: this.baseUrl, what }, 'partner refused the access token; renewing once');
      this.markStale(state.tokenUsed!);
      try {
        return await this.withRetries(what, attempt);
      } catch (renewed) {
        // A token just issued refused too says nothing of the request: the partner is not
        // taking calls now. Unavailable, so nothing is failed for it and the call is made later.
        if (!state.tokenRefused || !isPartnerError(renewed)) throw renewed;
        throw new PartnerError({ kind: 'unavailable', message: `${what}: the partner refused a token it had just issued (${renewed.message})`, httpStatus: renewed.httpStatus, partnerCode: renewed.partnerCode });
      }
    }
  }

  /** Runs `attempt` up to attemptsMax times while it fails with a retriable PartnerError. */
  private async withRetries<T>(what: string, attempt: () => Promise<T>): Promise<T> {
    for (let attemptNumber = 1; ; attemptNumber += 1) {
      try {
        return await attempt();
      } catch (error) {
        if (!isPartnerError(error) || !error.retriable) throw error;
        if (attemptNumber >= this.attemptsMax) {
          throw new PartnerError({
            kind: error.kind, message: `${error.message} (gave up after ${attemptNumber} attempts)`,
            httpStatus: error.httpStatus, partnerCode: error.partnerCode, partnerMessage: error.partnerMessage, retryAfterMs: error.retryAfterMs, cause: error,
          });
        }
        const delayMs = this.backoffMs(attemptNumber, error.retryAfterMs);
        log.debug({ partner: this.baseUrl, what, attemptNumber, delayMs, partnerCode: error.partnerCode }, 'partner unavailable; retrying');
        await sleep(delayMs);
      }
    }
  }

  /**
   * Exponential backoff with equal jitter (half fixed, half random, so concurrent callers spread
   * out without ever retrying at once), capped at backoffMsMax. A Retry-After below the cap is
   * the partner telling us exactly when to come back, so it wins.
   */
  private backoffMs(attemptNumber: number, retryAfterMs: number | null): number {
    if (retryAfterMs !== null) return Math.min(retryAfterMs, this.backoffMsMax);
    const ceilingMs = Math.min(this.backoffMsMax, this.backoffMsInitial * 2 ** (attemptNumber - 1));
    return Math.round(ceilingMs / 2 + (Math.random() * ceilingMs) / 2);
  }

  /** One HTTP exchange (exchange.ts), in one of the partner's slots for calls at once. */
  private exchange(what: string, url: string, init: RequestInit): Promise<unknown> {
    return exchange(this.calls, this.timeoutMs, what, url, init);
  }

  /** The cached token while it is fresh; otherwise the one shared renewal. */
  private currentToken(): Promise<CachedToken> {
    if (this.token !== null && wallNowMs() < this.token.renewAtMs) return Promise.resolve(this.token);
    if (this.tokenInFlight === null) {
      const refreshToken = this.token?.refreshToken ?? null;
      this.tokenInFlight = this.renewToken(refreshToken)
        .then((token) => {
          this.token = token;
          return token;
        })
        .finally(() => {
          this.tokenInFlight = null;
        });
    }
    return this.tokenInFlight;
  }

  /** A 401 means the partner no longer honours this token; the next call renews it (once). */
  private markStale(tokenUsed: CachedToken): void {
    // Only the token that was refused: a concurrent caller may already have renewed it.
    if (this.token !== null && this.token.accessToken === tokenUsed.accessToken) this.token.renewAtMs = 0;
  }

  /** The refresh grant first (cheaper, keeps the session); client credentials if it fails. */
  private async renewToken(refreshToken: string | null): Promise<CachedToken> {
    if (refreshToken !== null) {
      try {
        return await this.requestToken(new URLSearchParams({ grant_type: 'refresh_token' }), refreshToken);
      } catch (error) {
        log.debug({ partner: this.baseUrl, err: (error as Error).message }, 'token refresh failed; using client credentials');
      }
    }
    return this.requestToken(new URLSearchParams({ grant_type: 'client_credentials', scope: 'all' }), null);
  }

  private async requestToken(form: URLSearchParams, refreshToken: string | null): Promise<CachedToken> {
    const grant = await this.tokenEndpoint(form, refreshToken);
    const earlyMs = Math.min(RENEW_EARLY_MS_MAX, grant.expiresInMs * RENEW_EARLY_SHARE);
    return { accessToken: grant.accessToken, refreshToken: grant.refreshToken, renewAtMs: wallNowMs() + grant.expiresInMs - earlyMs };
  }

  /**
   * The tokens of a customer's consent (the three-legged flow): the code the partner redirected
   * back with, exchanged for the redirect_uri it was issued to.
   */
  async exchangeCode(code: string, redirectUri: string): Promise<UserTokens> {
    return this.userTokens(await this.tokenEndpoint(new URLSearchParams({ grant_type: 'authorization_code', scope: 'all', code, redirect_uri: redirectUri }), null));
  }

  /** New tokens for a customer's link; the partner retires the refresh token used. */
  async refreshUserTokens(refreshToken: string): Promise<UserTokens> {
    return this.userTokens(await this.tokenEndpoint(new URLSearchParams({ grant_type: 'refresh_token' }), refreshToken));
  }

  private userTokens(grant: TokenGrant): UserTokens {
    if (grant.refreshToken === null || grant.userId === null) throw unexpectedAnswer('token request', 'a user grant lacks refresh_token or user_id');
    return { accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresInMs: grant.expiresInMs, userId: grant.userId };
  }

  private async tokenEndpoint(form: URLSearchParams, refreshToken: string | null): Promise<TokenGrant> {
    const what = `token request (${form.get('grant_type')})`;
    // SPEC.md section 5 carries the refresh token in the query of the token request.
    const query = refreshToken === null ? '' : `?${new URLSearchParams({ refresh_token: refreshToken })}`;
    const payload = await this.exchange(what, `${this.baseUrl}/oauth/token${query}`, {
      method: 'POST',
      headers: { authorization: this.basicAuthorization, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    });
    if (!isRecord(payload) || typeof payload.access_token !== 'string' || !Number.isInteger(payload.expires_in)) {
      throw unexpectedAnswer(what, 'the token response lacks access_token or expires_in');
    }
    return {
      accessToken: payload.access_token,
      refreshToken: typeof payload.refresh_token === 'string' ? payload.refresh_token : null,
      expiresInMs: (payload.expires_in as number) * 1000,
      userId: Number.isInteger(payload.user_id) ? (payload.user_id as number) : null,
    };
  }
}
