// A route is declared once, with its schemas and its credential rule; the router, the
// validator and GET /v1/openapi.json are all built from these declarations.
import type Koa from 'koa';
import type { AccountView } from '../accounts/views';
import type { ErrorCode } from '../errors';

export type JsonSchema = Record<string, unknown>;
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** Scopes a restricted (rk_) key can hold (SPEC.md section 5, plus the ones later routes need). */
export const SCOPES = [
  'transfers:write',
  'transfers:read',
  'transactions:read',
  'payments:write',
  'payments:read',
  'customers:write',
  'customers:read',
  'contacts:write',
  'contacts:read',
  'fx:write',
  'request_logs:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Who may call a route:
 * - `public`: no credential at all (POST /v1/fx/quotes, sandbox bootstrap, health);
 * - `dashboard`: session JWT or master key only (SPEC.md section 5);
 * - `key`: any valid credential; rk_ keys need `scope`;
 * - `admin`: the master key only.
 * `moneyMoving` routes also require the account's KYB status to be active.
 */
export type AuthRule =
  | { kind: 'public' }
  | { kind: 'dashboard'; moneyMoving?: boolean }
  | { kind: 'key'; scope: Scope | null; moneyMoving?: boolean }
  | { kind: 'admin'; moneyMoving?: undefined };

export interface Principal {
  /** `secret` | `publishable` | `restricted` API key, `session` JWT, or the `master` key. */
  kind: 'secret' | 'publishable' | 'restricted' | 'session' | 'master';
  /** The caller's account; null only for the master key. */
  accountId: string | null;
  /** Id of the credential (API key id, or the session's account id); never the secret. */
  credentialId: string;
  scopes: readonly string[];
  isAdmin: boolean;
  /** The caller's account as read at authentication; absent for the master key. */
  account?: AccountView;
}

export interface RouteRequest<B = any, Q = any, P = any> {
  requestId: string;
  params: P;
  query: Q;
  body: B;
  principal: Principal | null;
  idempotencyKey: string | null;
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

export interface RouteResponse { status: number; description: string; schema?: JsonSchema; contentType?: string }

export interface RouteDef {
  method: HttpMethod;
  /** OpenAPI-style path: /v1/transfers/{id} */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: AuthRule;
  /** Write routes whose effect is executed at most once per Idempotency-Key (DESIGN.md section 5). */
  idempotent?: boolean;
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
  provisional?: (request: RouteRequest) => Promise<RouteResult>;
  /** The body of the provisional 202, for the OpenAPI document. */
  provisionalSchema?: JsonSchema;
  /** Extra error codes this route can answer with, for the OpenAPI document. */
  errors?: ErrorCode[];
  handler: (request: RouteRequest) => Promise<RouteResult>;
}

export function koaPath(openApiPath: string): string {
  return openApiPath.replace(/\{(\w+)\}/g, ':$1');
}

export const isWrite = (method: HttpMethod): boolean => method !== 'GET';
