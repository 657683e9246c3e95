// Assembles the Koa application from route declarations. Per request, in order:
// request id → error body → route match → rate limit → credential → Idempotency-Key presence
// → validation → idempotent execution → handler. The order is the precedence of the errors.
import Router, { type Layer } from '@koa/router';
import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/rules';
import type { Environment } from '../config';
import { DomainError } from '../domain-error';
import type { ReadAlong } from '../guards/rate-limit';
import { log } from '../log';
import { isSandboxScenario, SANDBOX_SCENARIO_HEADER, SANDBOX_SCENARIOS, type SandboxScenario } from '../partners/scenarios';
import { assertStorableText, readJsonBody } from './body';
import { errorMiddleware } from './errors';
import { canonicalPath, koaPath, requestFingerprint, type RouteDef, type RouteRequest, type RouteResult } from './route';
import { StageTiming } from './server-timing';
import { bodyValidator, gatherDeepObjects, textValidator, type Validator } from './validation';

/** The cross-cutting services a route runs through; each later concern plugs in here. */
export interface Guards {
  /** The Redis key authentication will read (a cached API key), so the rate limiter's call reads it. */
  authenticationReads?(ctx: Koa.Context, route: RouteDef): ReadAlong | null;
  authenticate(ctx: Koa.Context, route: RouteDef): Promise<Principal | null>;
  /** The request's bucket: the credential's, or the caller's address on a public route. */
  rateLimit(ctx: Koa.Context, reads?: ReadAlong[], publicRoute?: boolean): Promise<void>;
  /**
   * One credential attempt of the caller's address (and of the account named, if any): on
   * credential routes, and when a credential is refused; 429 when none is left.
   */
  credentialAttempt?(ctx: Koa.Context, account?: string | null): Promise<void>;
  /**
   * Runs `execute` to one recorded answer per (account, Idempotency-Key), under the id of the key's
   * execution (again under the same id only when the request running it died); replays the stored result.
   */
  idempotent(request: RouteRequest, route: RouteDef, execute: (executionId: string) => Promise<RouteResult>): Promise<RouteResult>;
  /**
   * For routes the ledger decides (DESIGN.md section 5f): the cached answer a replay of the
   * request would get, read in the rate limiter's call, and the answer itself: the cached one, or
   * the handler's (answer-cache.ts).
   */
  ledgerAnswers?: {
    reads(ctx: Koa.Context, route: RouteDef): ReadAlong | null;
    answer(request: RouteRequest, route: RouteDef, read: ReadAlong | null, execute: () => Promise<RouteResult>): Promise<RouteResult>;
  };
  /** Called once per request after the response is known (request logs). */
  recordRequest(ctx: Koa.Context): void;
}

export const openGuards: Guards = {
  authenticate: async () => null,
  rateLimit: async () => undefined,
  idempotent: async (_request, _route, execute) => execute(randomUUID()),
  recordRequest: () => undefined,
};

export interface AppOptions {
  routes: RouteDef[];
  guards: Guards;
  bodyLimitBytes: number;
  /** Serves the browser dashboard at /dashboard (the api role's app), before the API. */
  dashboard?: Koa.Middleware;
  /** The service's environment: live refuses the sandbox's controls (Sandbox-Scenario). */
  environment?: Environment;
}

const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The answers of a credential that is not valid: each is a credential attempt. */
const REFUSED_CREDENTIAL = new Set<string>(['authentication_required', 'invalid_api_key', 'invalid_token', 'token_expired']);

function readIdempotencyKey(ctx: Koa.Context): string {
  const key = ctx.get('idempotency-key');
  if (key === '') {
    throw new DomainError('idempotency_key_missing', 'write requests require an Idempotency-Key header', 'Idempotency-Key');
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new DomainError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces', 'Idempotency-Key');
  }
  return key;
}

function readSandboxScenario(ctx: Koa.Context, environment: Environment | undefined): SandboxScenario | null {
  const value = ctx.get(SANDBOX_SCENARIO_HEADER);
  if (value === '') return null;
  // A forced partner failure is a sandbox control: live money never follows a script.
  if (environment === 'live') {
    throw new DomainError('sandbox_scenario_not_allowed', `${SANDBOX_SCENARIO_HEADER} is a sandbox control; the live environment does not take it`, SANDBOX_SCENARIO_HEADER);
  }
  if (!isSandboxScenario(value)) {
    throw new DomainError('invalid_request', `${SANDBOX_SCENARIO_HEADER} must be one of ${SANDBOX_SCENARIOS.join(', ')}`, SANDBOX_SCENARIO_HEADER);
  }
  return value;
}

/** The methods of the routes that take `path` (their parameters fit), for a 405's Allow. */
type AllowedMethods = (path: string) => string[];

/** A 405 naming the methods the path takes. */
function methodNotAllowed(method: string, path: string, allowed: string[]): DomainError {
  const allow = allowed.join(', ');
  return new DomainError('method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allow}`, method, { Allow: allow });
}

function routeMiddleware(route: RouteDef, guards: Guards, bodyLimitBytes: number, allowedMethods: AllowedMethods, environment: Environment | undefined): Koa.Middleware {
  const validateParams: Validator | null = route.params ? textValidator(route.params, 'path') : null;
  const validateQuery: Validator | null = route.query ? textValidator(route.query, 'query') : null;
  const validateBody: Validator | null = route.body ? bodyValidator(route.body) : null;

  return async (ctx) => {
    const timing = new StageTiming();
    const authenticationRead = guards.authenticationReads?.(ctx, route) ?? null;
    const answerRead = guards.ledgerAnswers?.reads(ctx, route) ?? null;
    await guards.rateLimit(ctx, [authenticationRead, answerRead].filter((read): read is ReadAlong => read !== null), route.auth.kind === 'public');
    const principal = await guards.authenticate(ctx, route).catch(async (error: unknown) => {
      // A refused credential is an attempt of the caller's address: guessing keys or tokens
      // under ever new ones is limited by where it comes from (429 replaces the 401 when spent).
      if (error instanceof DomainError && REFUSED_CREDENTIAL.has(error.code)) await guards.credentialAttempt?.(ctx);
      throw error;
    });
    timing.end('auth');
    ctx.state.principal = principal;
    const idempotencyKey = route.idempotent ? readIdempotencyKey(ctx) : null;
    ctx.state.idempotencyKey = idempotencyKey;
    const sandboxScenario = route.sandboxScenario ? readSandboxScenario(ctx, environment) : null;

    const params = { ...ctx.params };
    let query: Record<string, unknown> = { ...ctx.query };
    // Parameters a route does not declare are never read, so only declared ones are checked.
    if (route.params) assertStorableText(params, 'path');
    if (route.query) {
      assertStorableText(query, 'query');
      query = gatherDeepObjects(query, route.query);
    }
    try {
      validateParams?.(params);
    } catch (error) {
      // The path is another route's (GET /v1/payments/add-funds is not GET /v1/payments/{id}).
      const allowed = allowedMethods(ctx.path);
      throw allowed.length > 0 ? methodNotAllowed(ctx.method, ctx.path, allowed) : error;
    }
    validateQuery?.(query);
    let body: unknown = undefined;
    if (validateBody) {
      body = await readJsonBody(ctx, route.bodyLimitBytes ?? bodyLimitBytes);
      ctx.state.requestBody = body;
      assertStorableText(body, 'body');
      validateBody(body === undefined ? {} : body);
      if (body === undefined) body = {};
    }
    if (route.credentialAttempt && guards.credentialAttempt) {
      const account = (body as Record<string, unknown>)[route.credentialAttempt.accountField];
      await guards.credentialAttempt(ctx, typeof account === 'string' ? account : null);
    }

    timing.end('validate');

    // The path as the route reads it (its ids in their canonical, lower-case form), not as sent:
    // /v1/contacts/3F1E… and /v1/contacts/3f1e… are one request.
    const print = route.idempotent ? requestFingerprint(route.method, canonicalPath(route.path, params), sandboxScenario, body) : null;
    const request: RouteRequest = { requestId: ctx.state.requestId, params, query, body, principal, idempotencyKey, fingerprint: print, executionId: null, sandboxScenario, koa: ctx };
    // The API keeps the key's record, unless the ledger's decision is the answer (DESIGN.md section 5f).
    const guarded = route.idempotent === true;
    let handled = false;
    const execute = async (executionId?: string) => {
      if (guarded) timing.end('claim');
      request.executionId = executionId ?? null;
      try {
        return await route.handler(request);
      } finally {
        handled = true;
        timing.end('handler');
      }
    };
    const result = guarded ? await guards.idempotent(request, route, execute)
      : route.idempotent === 'ledger' && guards.ledgerAnswers ? await guards.ledgerAnswers.answer(request, route, answerRead, execute)
        : await execute();
    if (guarded) timing.end(handled ? 'record' : 'replay');
    ctx.set('Server-Timing', timing.header());
    ctx.status = result.status;
    ctx.body = result.body;
    for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
  };
}

export function createApp({ routes, guards, bodyLimitBytes, dashboard, environment }: AppOptions): Koa {
  const app = new Koa();
  app.proxy = false;
  // The dashboard's page and assets are not API requests: neither logged nor limited.
  if (dashboard) app.use(dashboard);
  const router = new Router();
  // A path names a route when its parameters are what the route takes: /v1/payments/add-funds is
  // not GET /v1/payments/{id}, whose id is a uuid (what a 405's Allow header lists).
  const takesPath = new Map<Layer, (params: Record<string, string>) => boolean>();
  const allowedMethods: AllowedMethods = (path) => {
    const allowed = new Set<string>();
    for (const layer of router.stack) {
      if (!layer.match(path) || !(takesPath.get(layer)?.(layer.params(path, layer.captures(path))) ?? true)) continue;
      layer.methods.filter((m) => m !== 'HEAD').forEach((m) => allowed.add(m));
    }
    return [...allowed];
  };
  for (const route of routes) {
    const layer = router.register(koaPath(route.path), [route.method], routeMiddleware(route, guards, bodyLimitBytes, allowedMethods, environment)) as Layer;
    const validateParams = route.params ? textValidator(route.params, 'path') : null;
    takesPath.set(layer, (params) => {
      try { validateParams?.({ ...params }); return true; } catch { return false; }
    });
  }

  app.use(async (ctx, next) => {
    ctx.state.requestId = randomUUID();
    ctx.state.startedAt = process.hrtime.bigint();
    ctx.set('Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      // Logging must never turn an answered request into Koa's default 500 without a body.
      try {
        guards.recordRequest(ctx);
      } catch (error) {
        log.error({ err: error, requestId: ctx.state.requestId }, 'the request could not be logged');
      }
    }
  });
  app.use(errorMiddleware);
  app.use(router.routes());
  app.use(async (ctx) => {
    // Reached only when no route matched: a known path with another method is 405 with Allow.
    const allowed = allowedMethods(ctx.path);
    if (allowed.length > 0) throw methodNotAllowed(ctx.method, ctx.path, allowed);
    throw new DomainError('resource_not_found', `no route for ${ctx.method} ${ctx.path}`, ctx.path);
  });
  app.silent = true;
  return app;
}
