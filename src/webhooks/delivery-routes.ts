// Inspecting and replaying webhook deliveries (DESIGN.md section 5d): an endpoint's deliveries
// with every attempt (status, response code and body kept truncated, duration, error, the next
// attempt), one delivery with the event it sends, a retry now, a recovery of every failed delivery
// since an instant, and a test event. The dispatcher (consumers/webhooks) sends what these make
// due within its poll interval.
import type { Environment } from '../config';
import { keysetPage } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { listQuerySchema, listResponseSchema } from '../http/pagination';
import { withBody, type RouteDef, type RouteRequest } from '../http/route';
import { idParams } from '../http/validation';
import { testEvent, type AttemptRow, type DeliveryRow, type DeliveryStatus, type WebhookDeliveries } from './deliveries';
import type { WebhookEndpointRow, WebhookEndpoints } from './endpoints';
import { ownEndpoint, WEBHOOKS_READ, WEBHOOKS_WRITE } from './endpoints';
import { wallNow } from '../clock';
import { createdId } from '../idempotency/derived-ids';
import { asReplay } from '../idempotency/guard';

const attemptSchema = {
  type: 'object', required: ['attempt', 'started_at', 'duration_ms', 'response_status', 'response_body', 'error'],
  properties: {
    attempt: { type: 'integer', description: '1 for the first attempt' }, started_at: { type: 'string', format: 'date-time' },
    duration_ms: { type: 'integer' }, response_status: { type: ['integer', 'null'], description: 'null when no answer came' },
    response_body: { type: ['string', 'null'], description: 'the first 1024 bytes of the answer, … when cut' },
    error: {
      type: ['string', 'null'], pattern: '^(connection_failed|timeout|http_[0-9]{3})$',
      description: 'why the attempt failed, without detail of the network: connection_failed (no connection: refused, unresolvable, a refused address, cut off), timeout (no complete answer in time), http_<status> (the receiver answered another status than 2xx); null when it succeeded',
    },
  },
};

const deliverySchema = {
  type: 'object',
  required: ['id', 'webhook_id', 'event_id', 'event_type', 'account_seq', 'status', 'attempt_count', 'last_response_status', 'next_attempt_at', 'created_at', 'delivered_at', 'attempts'],
  properties: {
    id: { type: 'string', format: 'uuid' }, webhook_id: { type: 'string', format: 'uuid' }, event_id: { type: 'string', format: 'uuid', description: 'the webhook-id header of every attempt' },
    event_type: { type: 'string' }, account_seq: { type: ['integer', 'null'], description: 'the event\'s number in the account\'s sequence; null for test events' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'], description: 'pending: an attempt is to come (while the endpoint is disabled, once it is enabled again); failed: no attempt is left (retry or recover to send it again)' },
    attempt_count: { type: 'integer' }, last_response_status: { type: ['integer', 'null'] },
    next_attempt_at: { type: ['string', 'null'], format: 'date-time', description: 'when pending: the next attempt (while one is under way, when it counts as lost)' },
    created_at: { type: 'string', format: 'date-time' }, delivered_at: { type: ['string', 'null'], format: 'date-time' },
    attempts: { type: 'array', items: attemptSchema, description: 'newest first' },
  },
};

const deliveryWithEventSchema = {
  ...deliverySchema, required: [...deliverySchema.required, 'event'],
  properties: { ...deliverySchema.properties, event: { type: 'object', additionalProperties: true, description: 'the body every attempt sends: the event envelope of SPEC.md section 6' } },
};

/**
 * An attempt's error as the merchant reads it. Attempts recorded before errors were generic kept
 * the connection's detail (an address, a port, an errno): it is not shown.
 */
function publicError(attempt: AttemptRow): string | null {
  const { error, response_status: status } = attempt;
  if (error === null) return status !== null && (status < 200 || status >= 300) ? `http_${status}` : null;
  if (/^(connection_failed|timeout|http_\d{3})$/.test(error)) return error;
  if (status !== null) return `http_${status}`;
  return error.startsWith('no complete answer') ? 'timeout' : 'connection_failed';
}

function attemptView(attempt: AttemptRow) {
  return {
    attempt: attempt.attempt, started_at: attempt.started_at.toISOString(), duration_ms: attempt.duration_ms,
    response_status: attempt.response_status, response_body: attempt.response_body, error: publicError(attempt),
  };
}

function deliveryView(delivery: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: delivery.id, webhook_id: delivery.endpoint_id, event_id: delivery.event_id, event_type: delivery.event_type,
    account_seq: delivery.account_seq === null ? null : Number(delivery.account_seq), status: delivery.status, attempt_count: delivery.attempts,
    last_response_status: delivery.last_response_status, next_attempt_at: delivery.next_attempt_at?.toISOString() ?? null,
    created_at: delivery.created_at.toISOString(), delivered_at: delivery.delivered_at?.toISOString() ?? null, attempts: attempts.map(attemptView),
  };
}

const deliveryParams = { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, delivery_id: { type: 'string', format: 'uuid' } } };

export function webhookDeliveryRoutes(endpoints: WebhookEndpoints, deliveries: WebhookDeliveries, environment: Environment): RouteDef[] {
  const enabled = async (request: RouteRequest): Promise<WebhookEndpointRow> => {
    const endpoint = await ownEndpoint(endpoints, request);
    if (!endpoint.enabled) throw new DomainError('webhook_endpoint_disabled', `the endpoint is disabled (${endpoint.disabled_reason}); enable it first`, endpoint.id);
    return endpoint;
  };
  const ownDelivery = async (request: RouteRequest): Promise<DeliveryRow> => {
    const delivery = await deliveries.byId(request.params.id, request.params.delivery_id);
    if (!delivery) throw new DomainError('resource_not_found', 'no such delivery of this endpoint', request.params.delivery_id);
    return delivery;
  };
  const withEvent = async (delivery: DeliveryRow) => ({
    ...deliveryView(delivery, (await deliveries.attemptsOf([delivery.id])).get(delivery.id) ?? []), event: JSON.parse(delivery.body) as unknown,
  });
  return [
    {
      method: 'GET', path: '/v1/webhooks/{id}/deliveries', operationId: 'listWebhookDeliveries', tag: 'webhooks',
      summary: 'The endpoint\'s deliveries, newest first, each with its attempts', auth: WEBHOOKS_READ, params: idParams,
      query: listQuerySchema({ status: { type: 'string', enum: ['pending', 'delivered', 'failed'] } }),
      response: { status: 200, description: 'a page of deliveries', schema: listResponseSchema(deliverySchema) },
      errors: ['cross_account_access_denied'],
      handler: async (request) => {
        const endpoint = await ownEndpoint(endpoints, request);
        const page = await keysetPage(deliveries.query(endpoint.id, request.query.status as DeliveryStatus | undefined), 'webhook_deliveries', request.query, (row: DeliveryRow) => row,
          { scope: deliveries.query(endpoint.id) }); // a delivery that changed status since still marks its place
        const attempts = await deliveries.attemptsOf(page.data.map((row) => row.id));
        return { status: 200, body: { ...page, data: page.data.map((row) => deliveryView(row, attempts.get(row.id) ?? [])) } };
      },
    },
    {
      method: 'GET', path: '/v1/webhooks/{id}/deliveries/{delivery_id}', operationId: 'getWebhookDelivery', tag: 'webhooks',
      summary: 'One delivery, its attempts and the event it sends', auth: WEBHOOKS_READ, params: deliveryParams,
      response: { status: 200, description: 'the delivery', schema: deliveryWithEventSchema },
      errors: ['cross_account_access_denied'],
      handler: async (request) => {
        await ownEndpoint(endpoints, request);
        return { status: 200, body: await withEvent(await ownDelivery(request)) };
      },
    },
    {
      method: 'POST', path: '/v1/webhooks/{id}/deliveries/{delivery_id}/retry', operationId: 'retryWebhookDelivery', tag: 'webhooks',
      summary: 'Send a delivery again now, whatever its state; the same webhook-id, a new timestamp and signature',
      auth: WEBHOOKS_WRITE, idempotent: true, params: deliveryParams,
      response: { status: 202, description: 'the delivery, due now', schema: deliveryWithEventSchema },
      errors: ['cross_account_access_denied', 'webhook_endpoint_disabled'],
      handler: async (request) => {
        await enabled(request);
        return { status: 202, body: await withEvent(await deliveries.retryNow((await ownDelivery(request)).id)) };
      },
    },
    withBody({
      type: 'object', additionalProperties: false, required: ['since'],
      properties: { since: { type: 'string', format: 'date-time', description: 'every failed delivery made at or after this instant is sent again' } },
    } as const, {
      method: 'POST', path: '/v1/webhooks/{id}/recover', operationId: 'recoverWebhookDeliveries', tag: 'webhooks',
      summary: 'Send again every failed delivery since an instant, after an outage of the receiver',
      auth: WEBHOOKS_WRITE, idempotent: true, params: idParams,
      response: {
        status: 202, description: 'how many deliveries are due again',
        schema: { type: 'object', required: ['webhook_id', 'since', 'recovered'], properties: { webhook_id: { type: 'string', format: 'uuid' }, since: { type: 'string', format: 'date-time' }, recovered: { type: 'integer' } } },
      },
      errors: ['cross_account_access_denied', 'webhook_endpoint_disabled'],
      handler: async (request) => {
        const endpoint = await enabled(request);
        const since = new Date(request.body.since);
        if (since > wallNow()) throw new DomainError('invalid_request', 'since must not be in the future', 'since');
        return { status: 202, body: { webhook_id: endpoint.id, since: since.toISOString(), recovered: await deliveries.recover(endpoint.id, since) } };
      },
    }),
    {
      method: 'POST', path: '/v1/webhooks/{id}/test', operationId: 'testWebhook', tag: 'webhooks',
      summary: 'Send a webhook.test event to the endpoint, signed like every event, whatever its event filter',
      auth: WEBHOOKS_WRITE, idempotent: true, params: idParams,
      response: { status: 202, description: 'the test delivery, due now', schema: deliveryWithEventSchema },
      errors: ['cross_account_access_denied', 'webhook_endpoint_disabled'],
      handler: async (request) => {
        const endpoint = await enabled(request);
        const event = testEvent(endpoint, environment, createdId('webhook-test-event', request.executionId));
        const [inserted] = await deliveries.insert([{ event, endpointId: endpoint.id, claim: false }]);
        const answer = { status: 202, body: await withEvent(inserted ?? (await deliveries.byEvent(endpoint.id, event.id))!) };
        return inserted ? answer : asReplay(answer);
      },
    },
  ];
}
