// GET /v1/openapi.json is generated from the same route declarations that drive routing and
// validation, so the document cannot drift from what the server does (SPEC.md section 9).
import { WEBHOOK_EVENT_TYPES } from '../../ledger/event-types';
import { ERROR_STATUS, type ErrorCode } from '../domain-error';
import { SANDBOX_SCENARIO_HEADER, SANDBOX_SCENARIOS, SCENARIO_EFFECTS } from '../partners/scenarios';
import { REDACTED, SECRET_REDACTED_HEADER } from '../redaction';
import type { JsonSchema, RouteDef } from './route';
import { UUID_PATTERN } from './validation';

export const ERROR_BODY_SCHEMA: JsonSchema = {
  type: 'object', additionalProperties: false,
  required: ['success', 'error', 'message', 'details'],
  properties: {
    success: { type: 'boolean', const: false },
    error: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    message: { type: 'string' },
    details: { type: ['string', 'null'] },
  },
};

function parameters(schema: JsonSchema | undefined, location: 'path' | 'query'): unknown[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.has(name),
    ...(property.description ? { description: property.description } : {}),
    // An object in the query is sent as name[key]=value (validation.ts gatherDeepObjects).
    ...(property.type === 'object' ? { style: 'deepObject', explode: true } : {}),
    schema: publicSchema(property),
  }));
}

function security(route: RouteDef): unknown[] {
  switch (route.auth.kind) {
    case 'public': return [];
    case 'dashboard': return [{ sessionToken: [] }, { masterKey: [] }];
    case 'admin': return [{ masterKey: [] }];
    case 'session': return [{ sessionToken: [] }];
    case 'key': return [{ apiKey: route.auth.scope ? [route.auth.scope] : [] }, { sessionToken: [] }, { masterKey: [] }];
  }
}

/** Strips the validator-only keyword so the document stays plain JSON Schema 2020-12. */
function publicSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(publicSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = Object.fromEntries(Object.entries(schema).filter(([k]) => k !== 'x-error').map(([k, v]) => [k, publicSchema(v)]));
  // The format alone lets a client send `urn:uuid:…`; the pattern says the one form taken.
  if (copy.format === 'uuid' && copy.pattern === undefined) copy.pattern = UUID_PATTERN;
  return copy;
}

/**
 * The error codes a route can answer, from what it declares (auth rule, inputs, idempotency,
 * its own `errors`) and what every route can meet (rate limit, a dependency away, a bug).
 */
export function routeErrorCodes(route: RouteDef): ErrorCode[] {
  const codes = new Set<ErrorCode>(['rate_limit_exceeded', 'internal_error', 'service_unavailable']);
  const add = (...more: ErrorCode[]) => more.forEach((code) => codes.add(code));
  if (route.params || route.query || route.body || route.idempotent) add('invalid_request');
  if (route.idempotent) add('idempotency_key_missing', 'idempotency_conflict');
  if (route.params) add('resource_not_found');
  // Sandbox-Scenario sent to the live environment (app.ts).
  if (route.sandboxScenario) add('sandbox_scenario_not_allowed');
  const { auth } = route;
  if (auth.kind !== 'public') {
    // resource_not_found: an account_id (master key) that names no account.
    add('authentication_required', 'invalid_api_key', 'token_expired', 'invalid_token', 'environment_mismatch', 'cross_account_access_denied', 'resource_not_found');
    if (auth.kind === 'admin') add('insufficient_scope');
    if (auth.kind === 'dashboard') add('dashboard_access_denied');
    if (auth.kind === 'session') add('dashboard_access_denied', 'insufficient_scope');
    // A restricted key without the scope; a publishable key where a page may not show the answer.
    if (auth.kind === 'key' && (auth.scope || auth.publishable !== 'reads')) add('insufficient_scope');
    // A publishable key's write, on any route a key may reach (SPEC.md section 5).
    if ((auth.kind === 'key' || auth.kind === 'admin') && route.method !== 'GET') add('publishable_key_write_denied');
    if (auth.moneyMoving) add('account_not_active');
  }
  add(...(route.errors ?? []));
  return [...codes];
}

function errorResponses(route: RouteDef): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrorCodes(route)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries([...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [String(status), {
    description: [`Error: ${codes.join(', ')}`, ...codes.flatMap((code) => (route.errorNotes?.[code] ? [`${code}: ${route.errorNotes[code]}`] : []))].join('. '),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  }]));
}

/** The header of a replay whose secret is redacted: the secret was shown once, in the first answer. */
function secretRedactedHeader(fields: string[]): Record<string, unknown> {
  return {
    description: `present on a replay of the same Idempotency-Key: the secret (${fields.join(', ')}) was shown once, in the first answer, and is kept nowhere in clear, so this answer has it redacted ("${REDACTED}"; in a URL, the values of its OAuth state and similar query parameters)`,
    schema: { type: 'string', enum: ['true'] },
  };
}

/** Every success a route can answer: its response, the replay (200) of a creation, the provisional 202. */
function successResponses(route: RouteDef): Record<string, unknown> {
  const all = [route.response, ...(route.extraResponses ?? [])];
  if (route.idempotent && route.response.status === 201) all.push({ ...route.response, status: 200, description: 'a replay of the same Idempotency-Key and body (header Idempotent-Replayed: true)' });
  if (route.provisional && route.provisionalSchema) {
    const description = route.provisionalDescription ?? 'the ledger has not decided yet: provisional and not stored; repeat the request with the same Idempotency-Key after Retry-After seconds';
    all.push({ status: 202, description, schema: route.provisionalSchema });
  }
  return Object.fromEntries(all.map((response) => {
    const success: Record<string, unknown> = { description: response.description };
    if (route.secretFields && response.status < 300) success.headers = { [SECRET_REDACTED_HEADER]: secretRedactedHeader(route.secretFields) };
    if (response.schema) {
      success.content = {
        [response.contentType ?? 'application/json']: { schema: publicSchema(response.schema) },
        ...Object.fromEntries((response.alternatives ?? []).map((alternative) => [alternative.contentType, { schema: publicSchema(alternative.schema) }])),
      };
    }
    return [String(response.status), success];
  }));
}

/**
 * Who may call the operation, in words, and for API-key routes whether a publishable key may
 * read it (`x-publishable-key`): a pk_ key is in a page, so it reads only what the page may show.
 */
function credentialsNote(route: RouteDef): Record<string, unknown> {
  const { auth } = route;
  if (auth.kind !== 'key') return {};
  const scope = auth.scope ? `Restricted (rk_) keys need the ${auth.scope} scope.` : 'Any credential of the account may call it, restricted keys whatever their scopes.';
  const publishable = auth.publishable === 'reads'
    ? 'Publishable (pk_) keys may read it: it shows only what a page may show.'
    : route.method === 'GET'
      ? 'Publishable (pk_) keys may not read it (403 insufficient_scope): they read only what a page may show.'
      : 'Publishable (pk_) keys may not call it (403 publishable_key_write_denied).';
  return { description: `Secret (sk_) keys, sessions and the master key may call it. ${scope} ${publishable}`, 'x-publishable-key': auth.publishable === 'reads' ? 'reads' : 'refused' };
}

function operation(route: RouteDef): Record<string, unknown> {
  const headerParams = [
    ...(route.idempotent ? [{
      name: 'Idempotency-Key', in: 'header', required: true,
      description: 'unique per request of the account, e.g. a UUID or an invoice number; 1 to 255 printable ASCII characters without spaces',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]{1,255}$', examples: ['3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13'] },
    }] : []),
    ...(route.optionalIdempotencyKey ? [{
      name: 'Idempotency-Key', in: 'header', required: false, description: route.optionalIdempotencyKey,
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]{1,255}$', examples: ['3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13'] },
    }] : []),
    ...(route.sandboxScenario ? [{
      name: SANDBOX_SCENARIO_HEADER, in: 'header', required: false, schema: { type: 'string', enum: [...SANDBOX_SCENARIOS] },
      description: `sandbox only: a failure for the partner to act out; without it the payment succeeds. ${SANDBOX_SCENARIOS.map((s) => `${s}: ${SCENARIO_EFFECTS[s]}`).join('; ')}`,
    }] : []),
  ];
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...credentialsNote(route),
    tags: [route.tag],
    security: security(route),
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query'), ...headerParams].map(publicSchema),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: publicSchema(route.body) } } } } : {}),
    responses: { ...errorResponses(route), ...successResponses(route) },
  };
}

/** What every webhook delivery POSTs (SPEC.md section 6's envelope), the same as SSE sends. */
export const WEBHOOK_EVENT_SCHEMA: JsonSchema = {
  type: 'object', required: ['id', 'type', 'created_at', 'environment', 'resource_type', 'resource_id', 'account_seq', 'data'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'the event id, also the webhook-id header: deduplicate by it' },
    type: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES, 'webhook.test'] },
    created_at: { type: 'string', format: 'date-time' },
    environment: { type: 'string', enum: ['sandbox', 'live'] },
    resource_type: { type: 'string', enum: ['transfer', 'payment', 'balance', 'hold', 'balance_alert', 'webhook_endpoint', 'scheduled_transfer'] },
    resource_id: { type: 'string' },
    account_seq: { type: ['integer', 'null'], description: 'the event\'s number in its account\'s sequence (1, 2, 3, ... without gaps, in commit order): a gap means a missed event; null for webhook.test' },
    data: {
      type: 'object', required: ['id', 'status'], additionalProperties: true,
      properties: {
        id: { type: 'string' }, status: { type: 'string' }, amount: { type: 'string' }, currency: { type: 'string' },
        metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'the client\'s own values of a transfer, hold or payment ({} when none)' },
      },
      description: 'the resource: its id and status, amount and currency where it has them, its metadata where it has it, and its further fields',
    },
  },
};

const WEBHOOK_HEADERS = [
  { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' }, description: 'the event id, the same on every attempt' },
  { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string' }, description: 'the attempt\'s Unix seconds: reject more than 5 minutes away from your clock' },
  {
    name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string' },
    description: 'space-separated "v1,<base64 HMAC-SHA256 of id.timestamp.body under the base64-decoded secret after whsec_>", two during a secret rotation',
  },
];

export function openApiDocument(routes: RouteDef[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Payment orchestration API (sandbox)',
      version: '1.0.0',
      description: 'Customers, FX quotes, transfers, payments, transactions and balances. Amounts are decimal strings.',
    },
    servers: [{ url: serverUrl }],
    paths,
    webhooks: {
      event: {
        post: {
          operationId: 'receiveWebhookEvent', tags: ['webhooks'], summary: 'What the service POSTs to a registered endpoint, signed (Standard Webhooks)',
          parameters: WEBHOOK_HEADERS,
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEvent' } } } },
          responses: { '200': { description: 'any 2xx within 10 s is success; 410 disables the endpoint; anything else is retried (a Retry-After is honoured)' } },
        },
      },
    },
    components: {
      schemas: { Error: publicSchema(ERROR_BODY_SCHEMA), WebhookEvent: publicSchema(WEBHOOK_EVENT_SCHEMA) },
      securitySchemes: {
        apiKey: {
          type: 'http', scheme: 'bearer',
          description: 'sk_, pk_ or rk_ API key. A restricted (rk_) key calls the operations whose requirement names one of its scopes. A publishable (pk_) key only reads, and only the operations marked x-publishable-key: reads (the account, FX quotes): it sits in a page anyone can read, so no request logs, bank details, claim links, customers, payments or events',
        },
        sessionToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        masterKey: { type: 'http', scheme: 'bearer', description: 'master key from the MASTER_KEY setting' },
      },
    },
  };
}
