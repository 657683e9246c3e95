// A route is declared once, with its schemas and its credential rule; the router, the
// validator and GET /v1/openapi.json are all built from these declarations.
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type Koa from 'koa';
import { createHash } from 'node:crypto';
import type { AuthRule, Principal } from '../auth/rules';
import type { ErrorCode } from '../domain-error';
import type { SandboxScenario } from '../partners/scenarios';

export type JsonSchema = Record<string, unknown>;
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * What a handler receives, validated. `B` is the body's type, derived from the route's body
 * schema by withBody(); a route without a body schema has an `unknown` body.
 */
export interface RouteRequest<B = unknown, Q = any, P = any> {
  requestId: string;
  params: P;
  query: Q;
  body: B;
  principal: Principal | null;
  idempotencyKey: string | null;
  /** For idempotent routes: the request's fingerprint (method, path, scenario, canonical body; idempotency/guard.ts). */
  fingerprint: string | null;
  /**
   * On routes whose Idempotency-Key record the API keeps: the id of the key's execution, the same
   * when a retry takes over from a request that died (its effect may have committed); a creation
   * derives its resource's id from it (idempotency/derived-ids.ts createdId), so it makes one.
   */
  executionId: string | null;
  /** The sandbox failure asked for with the Sandbox-Scenario header, on routes that take one. */
  sandboxScenario: SandboxScenario | null;
  koa: Koa.Context;
}

export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /**
   * False for a provisional answer (a decision still pending): it is not stored as the outcome
   * of the Idempotency-Key, so a retry with the same key learns the final outcome.
   */
  final?: boolean;
}

export interface RouteResponse {
  status: number;
  description: string;
  schema?: JsonSchema;
  contentType?: string;
  /** The same answer in other media types, chosen by the Accept header (CSV beside JSON). */
  alternatives?: Array<{ contentType: string; schema: JsonSchema }>;
}

export interface RouteDef<B = unknown> {
  method: HttpMethod;
  /** OpenAPI-style path: /v1/transfers/{id} */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: AuthRule;
  /**
   * Write routes whose effect is executed at most once per Idempotency-Key. `true`: the API keeps
   * the key's record (DESIGN.md section 5, src/idempotency/guard.ts); `'ledger'`: the answer is the
   * ledger's decision, and the ledger's processed command is the key's record (section 5f): the
   * handler sends the key and the fingerprint with its command.
   */
  idempotent?: boolean | 'ledger';
  /**
   * Fields of the answer that hold a secret shown once (a key, a signing secret, a consent URL's
   * OAuth state): what is kept of the answer has them redacted (src/redaction.ts), so a replay of
   * the Idempotency-Key answers them redacted, with the header Secret-Redacted: true.
   */
  secretFields?: string[];
  /**
   * Gives a replay's redacted secrets back where they are still the route's to give (a pending
   * partner link's consent page): the kept body with them, or null to leave it redacted.
   */
  restoreSecrets?: (kept: unknown) => Promise<unknown | null>;
  /** A route that keeps an Idempotency-Key of its own when one is sent, but takes requests without (POST /v1/reconciliations): the document says it is optional. */
  optionalIdempotencyKey?: string;
  /** Routes that move money through a partner take the Sandbox-Scenario header (src/partners/scenarios.ts). */
  sandboxScenario?: boolean;
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  response: RouteResponse;
  /** Other successes the route answers (the replay 200 of a 201 and the provisional 202 are added by themselves). */
  extraResponses?: RouteResponse[];
  /**
   * For idempotent routes whose effect the ledger decides: the provisional answer (202, not
   * stored) a duplicate gets while the first request with its key is still running. Without it
   * such a duplicate gets a retriable 503.
   */
  provisional?: (request: RouteRequest<B>) => Promise<RouteResult>;
  /** The body of the provisional 202, for the OpenAPI document. */
  provisionalSchema?: JsonSchema;
  /** What the provisional 202 means, for the OpenAPI document, when the route answers it for more than a duplicate. */
  provisionalDescription?: string;
  /**
   * The route checks or makes a credential (sign-in, sign-up): each request is a credential
   * attempt of the caller's address and of the account this body field names (rate-limit.ts).
   */
  credentialAttempt?: { accountField: string };
  /** A larger request body than the service's BODY_LIMIT_BYTES (an uploaded statement). */
  bodyLimitBytes?: number;
  /** Extra error codes this route can answer with, for the OpenAPI document. */
  errors?: ErrorCode[];
  /** What an error code means on this route, when it says more than the code (OpenAPI responses). */
  errorNotes?: Partial<Record<ErrorCode, string>>;
  handler: (request: RouteRequest<B>) => Promise<RouteResult>;
}

/** The TypeScript type of what a JSON Schema validates (json-schema-to-ts). */
export type BodyOf<S extends JSONSchema> = FromSchema<S>;

/**
 * A route with a request body: `body` validates and documents it, and its handlers read it as
 * the type that same schema describes, so a field renamed in the schema breaks the build.
 */
export function withBody<const S extends JSONSchema, B = FromSchema<S>>(body: S, route: Omit<RouteDef<B>, 'body'>): RouteDef {
  return { ...route, body: body as JsonSchema } as unknown as RouteDef;
}

export function koaPath(openApiPath: string): string {
  return openApiPath.replace(/\{(\w+)\}/g, ':$1');
}

/** A route's path with its (validated, canonical) parameters in place of their names. */
export function canonicalPath(openApiPath: string, params: Record<string, unknown>): string {
  return openApiPath.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
}

export function fingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

/** A request's fingerprint: a scenario is part of what was asked, so the same key with another scenario is another request. */
export function requestFingerprint(method: string, path: string, scenario: string | null, body: unknown): string {
  return fingerprint(method, scenario ? `${path}#${scenario}` : path, body);
}

/** Canonical JSON: keys sorted, so {"a":1,"b":2} and {"b":2,"a":1} are the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
