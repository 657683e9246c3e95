// GET /v1/openapi.json is generated from the same route declarations that drive routing and
// validation, so the document cannot drift from what the server does (SPEC.md section 9).
import { ERROR_STATUS } from '../errors';
import type { JsonSchema, RouteDef } from './route';

const ERROR_BODY_SCHEMA: JsonSchema = {
  type: 'object',
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
    schema: property,
  }));
}

function security(route: RouteDef): unknown[] {
  switch (route.auth.kind) {
    case 'public': return [];
    case 'dashboard': return [{ sessionToken: [] }, { masterKey: [] }];
    case 'admin': return [{ masterKey: [] }];
    case 'key': return [{ apiKey: route.auth.scope ? [route.auth.scope] : [] }, { sessionToken: [] }, { masterKey: [] }];
  }
}

/** Strips the validator-only keyword so the document stays plain JSON Schema 2020-12. */
function publicSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(publicSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== 'x-error').map(([k, v]) => [k, publicSchema(v)]));
}

function operation(route: RouteDef): Record<string, unknown> {
  const headerParams = route.idempotent
    ? [{ name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 } }]
    : [];
  const success: Record<string, unknown> = { description: route.response.description };
  if (route.response.schema) {
    success.content = { [route.response.contentType ?? 'application/json']: { schema: publicSchema(route.response.schema) } };
  }
  const errorResponse = { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security: security(route),
    parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query'), ...headerParams].map(publicSchema),
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: publicSchema(route.body) } } } } : {}),
    responses: { [String(route.response.status)]: success, default: errorResponse },
  };
}

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
    components: {
      schemas: { Error: ERROR_BODY_SCHEMA },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'sk_, pk_ or rk_ API key' },
        sessionToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        masterKey: { type: 'http', scheme: 'bearer', description: 'master key from the MASTER_KEY setting' },
      },
    },
  };
}
