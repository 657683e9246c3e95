// The mock rails: one real HTTP server standing for the four outside partners (DESIGN.md
// section 5, Partners). Each partner lives under /<slug> with its own OAuth 2.0 token space
// (SPEC.md section 5, Partner-side OAuth 2.0) and its own payment book, kept in Postgres in a
// schema of the rails' own (schema.ts): a partner keeps its books, so a restart changes no
// payment, statement or grant. The sandbox controls below (counters, forced refusals) are the
// process's own and start afresh.
//
// Routes, per partner slug (fiat, chain, claimless, openbank):
//   GET  /<slug>/healthz
//   POST /<slug>/oauth/token                   Basic client auth, form body (oauth.ts)
//   GET  /<slug>/oauth/authorize               the consent page: an HTML form a person submits
//   POST /<slug>/oauth/authorize               its answer: 302 to redirect_uri?code=...&state=...
//                                              (approve) or ?error=access_denied&state=... (deny)
//   POST /<slug>/v1/payments                   Bearer token; JSON body (payments.ts; `scenario`: src/partners/scenarios.ts)
//   GET  /<slug>/v1/payments?reference=<ref>   Bearer token: the payment made under the caller's reference (404 if none)
//   GET  /<slug>/v1/payments/<id>              Bearer token
//   POST /<slug>/v1/payments/<id>/returns      Bearer token: part of a completed payment given back, a
//                                              payment of its own under the caller's reference (payments.ts)
//   GET  /<slug>/v1/funding-methods            Bearer token: the user's funding methods
//   GET  /<slug>/v1/statements/<YYYY-MM-DD>    the client's token: the daily settlement statement (statements.ts)
//   GET  /claimless/claim/<id>                 the claim page a payee opens (no token: it is a link)
//   POST /claimless/claim/<id>                 its form: decision=claim completes the payment
//   POST /claimless/_control/expire-claim/<id> SANDBOX ONLY: an unclaimed link expires now
//   POST /<slug>/_control/cancel/<id>          SANDBOX ONLY: a payment not paid yet (pending or
//                                              authorized) is stopped, ends `reversed`, never settles;
//                                              409 not_cancellable once it has ended
//   POST /<slug>/_control/settle/<id>          SANDBOX ONLY: a payment not final settles now; 409
//                                              not_settleable once ended, or while due to be reversed
//   POST /<slug>/_control/expire-tokens        SANDBOX ONLY: expires every access token now
//   POST /<slug>/_control/invalid-token?count=N SANDBOX ONLY: the next N API calls answer 401
//                                              invalid_token "Invalid token" to a valid token
//   POST /<slug>/_control/down?seconds=N       SANDBOX ONLY: the partner is down for N seconds: every
//                                              /v1 call hangs until then and is answered 503
//   GET  /<slug>/_control/stats                SANDBOX ONLY: { token_requests, submit_attempts,
//                                              rejected_tokens }
//   POST /<slug>/_control/failure-message?count=N SANDBOX ONLY: JSON { message, repeat? }: the
//                                              next N scenario failures say it (failure-message.ts)
//   POST /<slug>/_control/outage?ms=N          SANDBOX ONLY: every API call answers 503 for the
//                                              next N ms (0 ends it): the partner is down a while
// The _control routes exist so tests can force token renewal, count round trips and hear a
// partner's failure message of their choosing (any text: control characters, 100 KB); a real
// partner has nothing like them. They take a secret of their own (`Authorization: Bearer
// <controlSecret>`, MOCK_RAILS_CONTROL_SECRET): whoever reaches the rails must not stop or cancel
// payments with them.
import { createHash, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { log } from '../log';
import { basicCredentials, bearerToken, RailError, readForm, readJsonObject, sendJson, sendRailError } from './http';
import { CLIENT_USER_ID, TokenSpace, type OAuthClient, type Principal } from './oauth';
import { isPartnerSlug, PARTNER_SLUGS, type PartnerSlug } from '../partners/registry';
import { fundingMethodsOf, PARTNERS } from './partners';
import { PaymentBook } from './payments';
import { openBooks, type RailsBooks } from './schema';
import { dailyStatement, statementPage } from './statements';
import { FailureMessage } from './failure-message';
import { cancelPayment, expireClaim, expireTokens, goDown, readStats, refuseNextTokens, setFailureMessage, settlePayment, startOutage, waitOutOutage } from './controls';
import type { Exchange, PartnerRail, Route } from './rail';
import { claimPage, claimPayment, escapeHtml } from './claim-pages';
import { wallNowMs } from '../clock';

export interface MockRailsOptions {
  /** The Postgres database the books are kept in (schema mock_rails). */
  databaseUrl: string;
  /** Which books: a restart with the same name finds them as they were (default "sandbox"). */
  book?: string;
  host: string;
  port: number;
  tokenTtlSeconds: number;
  clientId: string;
  clientSecret: string;
  /** The credential of the `_control` routes (Bearer). */
  controlSecret: string;
  redirectUris: string[];
  chainConfirmMs: number;
  /** How long a claim link can be claimed (default one day). */
  claimTtlMs?: number;
  /**
   * The share of API calls refused with 401 "Invalid token" although their token is valid, as
   * real partners sometimes do (SPEC.md section 5); 0 for none.
   */
  spuriousInvalidTokenRate?: number;
  /** How long a submission of the slow_answer scenario waits before answering (default SLOW_ANSWER_MS_DEFAULT). */
  slowAnswerMs?: number;
}

/**
 * The slow_answer scenario's delay: longer than the dispatcher's 2 s bound of one call
 * (consumers/partners/dispatcher.ts PARTNER_CALL_TIMEOUT_MS), so the caller never hears the answer.
 */
export const SLOW_ANSWER_MS_DEFAULT = 3_000;

export interface MockRails {
  /** http://host:actualPort, without a trailing slash; partner base URLs are `${url}/<slug>`. */
  url: string;
  /** Registers one more redirect_uri of the client with every partner (an API that took a free port). */
  registerRedirectUri(uri: string): void;
  stop(): Promise<void>;
}

/** The books of the sandbox's own rails; tests name books of their own. */
export const DEFAULT_BOOK = 'sandbox';

const ROUTES: Route[] = [
  { method: 'GET', segments: ['healthz'], handle: ({ res }) => sendJson(res, 200, { status: 'ok' }) },
  { method: 'POST', segments: ['oauth', 'token'], handle: issueToken },
  { method: 'GET', segments: ['oauth', 'authorize'], handle: authorize },
  { method: 'POST', segments: ['oauth', 'authorize'], handle: answerConsent },
  { method: 'POST', segments: ['v1', 'payments'], handle: submitPayment },
  { method: 'GET', segments: ['v1', 'payments'], handle: findPayment },
  { method: 'GET', segments: ['v1', 'payments', ':id'], handle: getPayment },
  { method: 'POST', segments: ['v1', 'payments', ':id', 'returns'], handle: submitReturn },
  { method: 'GET', segments: ['v1', 'funding-methods'], handle: listFundingMethods },
  { method: 'GET', segments: ['v1', 'statements', ':id'], handle: getStatement },
  { method: 'GET', segments: ['claim', ':id'], handle: claimPage },
  { method: 'POST', segments: ['claim', ':id'], handle: claimPayment },
  { method: 'POST', segments: ['_control', 'expire-claim', ':id'], handle: expireClaim },
  { method: 'POST', segments: ['_control', 'cancel', ':id'], handle: cancelPayment },
  { method: 'POST', segments: ['_control', 'settle', ':id'], handle: settlePayment },
  { method: 'POST', segments: ['_control', 'expire-tokens'], handle: expireTokens },
  { method: 'POST', segments: ['_control', 'invalid-token'], handle: refuseNextTokens },
  { method: 'POST', segments: ['_control', 'down'], handle: goDown },
  { method: 'GET', segments: ['_control', 'stats'], handle: readStats },
  { method: 'POST', segments: ['_control', 'failure-message'], handle: setFailureMessage },
  { method: 'POST', segments: ['_control', 'outage'], handle: startOutage },
];

async function issueToken({ rail, req, res, query }: Exchange): Promise<void> {
  // Counted before authentication: a test counts every round trip to the token endpoint.
  rail.stats.tokenRequests += 1;
  rail.tokens.authenticateClient(basicCredentials(req));
  const form = await readForm(req);
  sendJson(res, 200, await rail.tokens.grant(form, query));
}

/** The consent page: who asks for what, and a form to approve or deny, posted to this same address. */
async function authorize({ rail, res, query }: Exchange): Promise<void> {
  const request = rail.tokens.checkAuthorization(query);
  const token = await rail.tokens.consentFormToken(request);
  const name = escapeHtml(rail.profile.displayName);
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${name}: authorize access</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<main>
<h1>${name}</h1>
<p>The payment service <strong>${escapeHtml(query.get('client_id') ?? '')}</strong> asks to make payments from your ${name} account on your behalf.</p>
<form method="post">
<input type="hidden" name="consent_token" value="${escapeHtml(token)}">
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</main>
</body></html>`;
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page), 'cache-control': 'no-store', 'x-frame-options': 'DENY' });
  res.end(page);
}

/** The person's answer: back to the client's redirect_uri with a code, or with access_denied. */
async function answerConsent({ rail, req, res, query }: Exchange): Promise<void> {
  const request = rail.tokens.checkAuthorization(query);
  const form = await readForm(req);
  const code = await rail.tokens.decide(request, form.get('consent_token'), form.get('decision'));
  const location = new URL(request.redirectUri);
  if (code === null) location.searchParams.set('error', 'access_denied');
  else location.searchParams.set('code', code);
  if (request.state !== null) location.searchParams.set('state', request.state);
  res.writeHead(302, { location: location.toString(), 'content-length': '0', 'cache-control': 'no-store' });
  res.end();
}

/** Bearer authentication of an API call; refusals are counted so tests can see renewals. */
async function authenticate(rail: PartnerRail, req: IncomingMessage): Promise<Principal> {
  try {
    const principal = await rail.tokens.verify(bearerToken(req));
    const spurious = rail.spurious.pending > 0 || (rail.spurious.rate > 0 && Math.random() < rail.spurious.rate);
    if (spurious) {
      rail.spurious.pending = Math.max(0, rail.spurious.pending - 1);
      throw new RailError(401, 'invalid_token', 'Invalid token');
    }
    return principal;
  } catch (error) {
    rail.stats.rejectedTokens += 1;
    throw error;
  }
}

async function submitPayment({ rail, req, res }: Exchange): Promise<void> {
  const { userId } = await authenticate(rail, req);
  // Counted once authenticated: a 401 that makes the client renew its token is no submit.
  rail.stats.submitAttempts += 1;
  const body = await readJsonObject(req);
  const { created, payment } = await rail.payments.submit(body, userId).catch((error: unknown) => {
    throw rail.failureMessage.answer(error);
  });
  // slow_answer: the payment is made (or found again), but every answer comes after the caller gave up.
  if (body.scenario === 'slow_answer') await sleep(rail.slowAnswerMs);
  sendJson(res, created ? 201 : 200, payment);
}

/** A return of part of a payment: submitted, counted and answered as a payment is. */
async function submitReturn({ rail, req, res, id }: Exchange): Promise<void> {
  const { userId } = await authenticate(rail, req);
  rail.stats.submitAttempts += 1;
  const body = await readJsonObject(req);
  const { created, payment } = await rail.payments.submitReturn(id, body, userId).catch((error: unknown) => {
    throw rail.failureMessage.answer(error);
  });
  if (body.scenario === 'slow_answer') await sleep(rail.slowAnswerMs);
  sendJson(res, created ? 201 : 200, payment);
}

/** The funding methods of the user the token acts for: where its payments come from. */
async function listFundingMethods({ rail, req, res }: Exchange): Promise<void> {
  const { userId } = await authenticate(rail, req);
  sendJson(res, 200, { data: fundingMethodsOf(rail.profile, userId) });
}

const STATEMENT_PAGE_MAX = 10_000;

/**
 * The client's settlement statement of one value date; a customer's token may not read it. With
 * `limit`, a page of it: `cursor` (the previous page's next_cursor) says where it goes on.
 */
async function getStatement({ rail, req, res, id, query }: Exchange): Promise<void> {
  const { userId } = await authenticate(rail, req);
  if (userId !== CLIENT_USER_ID) throw new RailError(403, 'insufficient_scope', 'settlement statements are the client\'s: use a client-credentials token');
  const limitText = query.get('limit');
  if (limitText === null) return sendJson(res, 200, await dailyStatement(rail.profile, rail.payments, id, wallNowMs()));
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > STATEMENT_PAGE_MAX) throw new RailError(400, 'invalid_request', `limit must be 1 to ${STATEMENT_PAGE_MAX}`);
  sendJson(res, 200, await statementPage(rail.profile, rail.payments, id, wallNowMs(), limit, query.get('cursor')));
}

/** The payment made under the caller's idempotency reference: how a caller learns whether an unanswered submission was made. */
async function findPayment({ rail, req, res, query }: Exchange): Promise<void> {
  await authenticate(rail, req);
  const reference = query.get('reference');
  if (!reference) throw new RailError(400, 'invalid_request', 'reference is required');
  sendJson(res, 200, await rail.payments.getByReference(reference));
}

async function getPayment({ rail, req, res, id }: Exchange): Promise<void> {
  await authenticate(rail, req);
  sendJson(res, 200, await rail.payments.get(id));
}

function matches(route: Route, segments: string[]): string | null {
  if (route.segments.length !== segments.length) return null;
  let id = '';
  for (let i = 0; i < segments.length; i += 1) {
    if (route.segments[i] === ':id') id = segments[i];
    else if (route.segments[i] !== segments[i]) return null;
  }
  return id;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new RailError(400, 'invalid_request', 'malformed percent-encoding in the path');
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** A control route's caller must show the control secret; compared in constant time. */
function checkControlSecret(req: IncomingMessage, expected: Buffer): void {
  const token = bearerToken(req);
  if (token === null || !timingSafeEqual(digest(token), expected)) {
    throw new RailError(401, 'invalid_client', 'the sandbox controls take Authorization: Bearer <MOCK_RAILS_CONTROL_SECRET>');
  }
}

async function dispatch(rails: Map<PartnerSlug, PartnerRail>, controlDigest: Buffer, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://mock-rails.invalid');
  const [slug = '', ...segments] = url.pathname.split('/').filter(Boolean).map(decodeSegment);
  const rail = isPartnerSlug(slug) ? rails.get(slug) : undefined;
  if (!rail) throw new RailError(404, 'not_found', `no partner "${slug}"; partners: ${PARTNER_SLUGS.join(', ')}`);
  const allowed: string[] = [];
  for (const route of ROUTES) {
    const id = matches(route, segments);
    if (id === null) continue;
    if (route.method !== req.method) {
      allowed.push(route.method);
      continue;
    }
    if (segments[0] === '_control') checkControlSecret(req, controlDigest);
    // A partner that is down answers neither its API nor its token endpoint.
    if (segments[0] === 'v1' || (segments[0] === 'oauth' && segments[1] === 'token')) await waitOutOutage(rail);
    return route.handle({ rail, req, res, query: url.searchParams, id });
  }
  if (allowed.length > 0) throw new RailError(405, 'method_not_allowed', undefined, { allow: allowed.join(', ') });
  throw new RailError(404, 'not_found', 'no such route');
}

function answerFailure(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error instanceof RailError) {
    sendRailError(res, error);
    return;
  }
  // Only RailErrors carry a partner answer; anything else is a bug in the mock: an opaque 500.
  log.error({ err: error }, 'mock rails failed on a request');
  sendRailError(res, new RailError(500, 'internal'));
}

function createRails(client: OAuthClient, options: MockRailsOptions, books: RailsBooks, publicUrl: () => string): Map<PartnerSlug, PartnerRail> {
  return new Map(PARTNER_SLUGS.map((slug) => {
    const profile = PARTNERS[slug];
    const partnerBook = { db: books.db, book: books.book, partner: slug };
    return [slug, {
      profile,
      tokens: new TokenSpace(client, options.tokenTtlSeconds, profile.clientAccountId, partnerBook),
      payments: new PaymentBook(profile, partnerBook, { chainConfirmMs: options.chainConfirmMs, publicUrl, claimTtlMs: options.claimTtlMs }),
      stats: { tokenRequests: 0, submitAttempts: 0, rejectedTokens: 0 },
      spurious: { pending: 0, rate: options.spuriousInvalidTokenRate ?? 0 },
      failureMessage: new FailureMessage(),
      outage: { untilMs: 0, hangs: false },
      slowAnswerMs: options.slowAnswerMs ?? SLOW_ANSWER_MS_DEFAULT,
    }];
  }));
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Keep-alive connections of fetch clients would hold close() open indefinitely.
    server.closeAllConnections();
  });
}

/** How often grants that can no longer be used are deleted from the books. */
const FORGET_EXPIRED_MS = 60_000;

export async function startMockRails(options: MockRailsOptions): Promise<MockRails> {
  let url = '';
  const client = { clientId: options.clientId, clientSecret: options.clientSecret, redirectUris: [...options.redirectUris] };
  const books = await openBooks(options.databaseUrl, options.book ?? DEFAULT_BOOK);
  const rails = createRails(client, options, books, () => url);
  const controlDigest = digest(options.controlSecret);
  const server = createServer((req, res) => {
    dispatch(rails, controlDigest, req, res).catch((error: unknown) => answerFailure(res, error));
  });
  const address = await listen(server, options.port, options.host).catch(async (error: unknown) => {
    await books.close();
    throw error;
  });
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  url = `http://${host}:${address.port}`;
  const forgetting = setInterval(() => {
    for (const rail of rails.values()) rail.tokens.forgetExpired().catch((error: unknown) => log.warn({ err: error }, 'mock rails could not forget expired grants'));
  }, FORGET_EXPIRED_MS);
  forgetting.unref();
  return {
    url,
    registerRedirectUri: (uri) => client.redirectUris.push(uri),
    async stop() {
      clearInterval(forgetting);
      await close(server);
      await books.close();
    },
  };
}
