// Webhook endpoints (DESIGN.md section 5d): create, list, get, update, delete, and rotate the
// signing secret, which is shown only when it is made. Secret keys, restricted keys with the
// webhooks scopes, and sessions manage them; publishable keys cannot, not even to read. In live
// an endpoint must be HTTPS and must not resolve to a private or loopback address; the sandbox
// allows plain HTTP, and private addresses as WEBHOOK_PRIVATE_ADDRESSES says (on loopback by
// default, so tests and local development can receive their own events; see src/config.ts).
import { WEBHOOK_EVENT_TYPES } from '../../ledger/event-types';
import type { Environment, WebhookPrivateAddresses } from '../config';
import type { Db } from '../db';
import { keysetPage } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { actingAccountId, actingAccountIdForWrite } from '../http/acting-account';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef, type RouteRequest } from '../http/route';
import { idParams } from '../http/validation';
import { createdId } from '../idempotency/derived-ids';
import { createdAnswer } from '../idempotency/guard';
import { refusedDestination } from './addresses';
import { ownEndpoint, WEBHOOKS_READ, WEBHOOKS_WRITE, type WebhookEndpointRow, type WebhookEndpoints } from './endpoints';
import { wallNow } from '../clock';

const urlSchema = {
  type: 'string', minLength: 1, maxLength: 2048, format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', examples: ['https://example.com/webhooks'],
  description: 'where events are POSTed: an absolute HTTPS URL without credentials (plain HTTP on any address is allowed in the sandbox)',
} as const;
const eventsSchema = {
  type: 'array', uniqueItems: true, maxItems: WEBHOOK_EVENT_TYPES.length, items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
  description: 'the event types to deliver; empty or absent: all of them',
} as const;
const descriptionSchema = { type: ['string', 'null'], maxLength: 500 } as const;

const endpointSchema = {
  type: 'object', required: ['id', 'url', 'description', 'events', 'enabled', 'disabled_reason', 'secret_rotation_ends_at', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string', format: 'uuid' }, url: { type: 'string' }, description: { type: ['string', 'null'] },
    events: { type: 'array', items: { type: 'string' } }, enabled: { type: 'boolean', description: 'false: nothing is sent; its events wait as pending deliveries until it is enabled again' }, disabled_reason: { type: ['string', 'null'] },
    secret_rotation_ends_at: { type: ['string', 'null'], format: 'date-time', description: 'while set, the previous secret also signs deliveries' },
    created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' },
  },
};
const withSecretSchema = {
  ...endpointSchema, required: [...endpointSchema.required, 'secret'],
  properties: { ...endpointSchema.properties, secret: { type: 'string', description: 'the signing secret (whsec_...), shown only now (a replay of its Idempotency-Key answers "[redacted]", header Secret-Redacted: true)' } },
};

function endpointView(endpoint: WebhookEndpointRow) {
  const rotating = endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > wallNow();
  return {
    id: endpoint.id, url: endpoint.url, description: endpoint.description, events: endpoint.events, enabled: endpoint.enabled,
    disabled_reason: endpoint.disabled_reason, secret_rotation_ends_at: rotating ? endpoint.previous_secret_expires_at!.toISOString() : null,
    created_at: endpoint.created_at.toISOString(), updated_at: endpoint.updated_at.toISOString(),
  };
}

/** @throws DomainError invalid_request naming `url` */
export async function checkUrl(text: string, environment: Environment, privateAddresses: WebhookPrivateAddresses): Promise<string> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DomainError('invalid_request', 'url must be an absolute http(s) URL', 'url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new DomainError('invalid_request', 'url must be http(s)', 'url');
  if (url.username || url.password) throw new DomainError('invalid_request', 'url must not carry credentials', 'url');
  if (environment === 'live' && url.protocol !== 'https:') throw new DomainError('invalid_request', 'live webhook endpoints must use HTTPS', 'url');
  // The host as the connection will use it: the URL parser has already rewritten the other forms
  // of an address (2130706433, 0x7f.1, [::ffff:127.0.0.1]) to the one it connects to.
  if (privateAddresses === 'refuse') {
    const refused = await refusedDestination(url);
    if (refused === 'unresolvable') throw new DomainError('invalid_request', `url's host ${url.hostname} does not resolve`, 'url');
    if (refused) throw new DomainError('invalid_request', 'webhook endpoints must not point to a private, loopback, link-local or otherwise non-public address', 'url');
  }
  return url.toString();
}

export function webhookRoutes(db: Db, endpoints: WebhookEndpoints, environment: Environment, privateAddresses: WebhookPrivateAddresses): RouteDef[] {
  const own = (request: RouteRequest) => ownEndpoint(endpoints, request);
  return [
    withBody({
      type: 'object', additionalProperties: false, required: ['url'],
      properties: { url: urlSchema, events: eventsSchema, description: descriptionSchema, account_id: { type: 'string', format: 'uuid', description: 'master key only' } },
    } as const, {
      method: 'POST', path: '/v1/webhooks', operationId: 'createWebhook', tag: 'webhooks',
      summary: 'Register an endpoint for the account\'s events; its signing secret is shown only in this answer',
      auth: WEBHOOKS_WRITE, idempotent: true, secretFields: ['secret'],
      response: { status: 201, description: 'the endpoint and its secret', schema: withSecretSchema },
      handler: async (request) => {
        const accountId = await actingAccountIdForWrite(request, db);
        const url = await checkUrl(request.body.url, environment, privateAddresses);
        const { endpoint, secret, created } = await endpoints.create(createdId('webhook-endpoint', request.executionId), accountId, { url, events: [...(request.body.events ?? [])], description: request.body.description ?? null });
        return createdAnswer({ ...endpointView(endpoint), secret }, created);
      },
    }),
    {
      method: 'GET', path: '/v1/webhooks', operationId: 'listWebhooks', tag: 'webhooks',
      summary: 'The account\'s webhook endpoints, newest first', auth: WEBHOOKS_READ,
      query: listQuerySchema({ account_id: { type: 'string', format: 'uuid', description: 'master key only' } }),
      response: { status: 200, description: 'a page of endpoints', schema: listResponseSchema(endpointSchema) },
      handler: async (request) => ({ status: 200, body: await keysetPage(endpoints.query(actingAccountId(request)), 'webhook_endpoints', request.query, endpointView) }),
    },
    {
      method: 'GET', path: '/v1/webhooks/{id}', operationId: 'getWebhook', tag: 'webhooks',
      summary: 'One webhook endpoint', auth: WEBHOOKS_READ, params: idParams,
      response: { status: 200, description: 'the endpoint', schema: endpointSchema },
      errors: ['cross_account_access_denied'],
      handler: async (request) => ({ status: 200, body: endpointView(await own(request)) }),
    },
    withBody({
      type: 'object', additionalProperties: false, minProperties: 1,
      properties: { url: urlSchema, events: eventsSchema, description: descriptionSchema, enabled: { type: 'boolean', description: 'false pauses deliveries: nothing is sent, and the events that happen meanwhile are recorded as pending deliveries; true resumes them: what waited is sent, the longest due first' } },
    } as const, {
      method: 'PATCH', path: '/v1/webhooks/{id}', operationId: 'updateWebhook', tag: 'webhooks',
      summary: 'Change an endpoint\'s url, event filter or description, or disable and enable it', auth: WEBHOOKS_WRITE, idempotent: true, params: idParams,
      response: { status: 200, description: 'the endpoint', schema: endpointSchema },
      errors: ['cross_account_access_denied'],
      handler: async (request) => {
        const endpoint = await own(request);
        const { url, events, description, enabled } = request.body;
        const changes = {
          ...(url !== undefined ? { url: await checkUrl(url, environment, privateAddresses) } : {}), ...(events !== undefined ? { events: [...events] } : {}),
          ...(description !== undefined ? { description } : {}), ...(enabled !== undefined ? { enabled } : {}),
        };
        return { status: 200, body: endpointView(await endpoints.update(endpoint.id, changes)) };
      },
    }),
    {
      method: 'DELETE', path: '/v1/webhooks/{id}', operationId: 'deleteWebhook', tag: 'webhooks',
      summary: 'Remove an endpoint: nothing more is delivered to it', auth: WEBHOOKS_WRITE, idempotent: true, params: idParams,
      response: { status: 200, description: 'deleted', schema: { type: 'object', required: ['id', 'deleted'], properties: { id: { type: 'string', format: 'uuid' }, deleted: { type: 'boolean', const: true } } } },
      errors: ['cross_account_access_denied'],
      handler: async (request) => {
        const endpoint = await own(request);
        await endpoints.delete(endpoint.id);
        return { status: 200, body: { id: endpoint.id, deleted: true } };
      },
    },
    {
      method: 'POST', path: '/v1/webhooks/{id}/rotate-secret', operationId: 'rotateWebhookSecret', tag: 'webhooks',
      summary: 'A new signing secret, shown only now; the previous one keeps signing beside it for 24 hours', auth: WEBHOOKS_WRITE, idempotent: true, params: idParams, secretFields: ['secret'],
      response: { status: 200, description: 'the endpoint and its new secret', schema: withSecretSchema },
      errors: ['cross_account_access_denied'],
      handler: async (request) => {
        const endpoint = await own(request);
        const { endpoint: rotated, secret } = await endpoints.rotate(endpoint.id);
        return { status: 200, body: { ...endpointView(rotated), secret } };
      },
    },
  ];
}
