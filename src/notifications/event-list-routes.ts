// The account's events, as a list (GET /v1/events): what the stream (GET /v1/notifications) and
// webhooks delivered, read back newest first, a page at a time, for a person (the dashboard) or a
// client catching up. The cursor is the account's event sequence number (account_seq).
import type { Db } from '../db';
import { eventsBefore } from './store';
import { actingAccountId, accountIdQuerySchema } from '../http/acting-account';
import { listResponseSchema } from '../http/pagination';
import type { RouteDef } from '../http/route';

const EVENTS_LIMIT_MAX = 100;

const EVENT_SCHEMA = {
  type: 'object', required: ['id', 'type', 'created_at', 'environment', 'resource_type', 'resource_id', 'account_id', 'account_seq', 'data'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    type: { type: 'string', description: 'transfer.*, reversal.failed, payment.*, balance.updated, hold.*, balance.threshold_crossed, scheduled_transfer.run, webhook_endpoint.disabled' },
    created_at: { type: 'string', format: 'date-time' },
    environment: { type: 'string' },
    resource_type: { type: 'string' },
    resource_id: { type: 'string' },
    account_id: { type: ['string', 'null'] },
    account_seq: { type: 'integer', minimum: 1, description: 'the event\'s number in its account\'s sequence: 1, 2, 3, ... in commit order' },
    data: {
      type: 'object', required: ['id', 'status', 'amount', 'currency', 'attributes'],
      properties: {
        id: { type: 'string' }, status: { type: 'string' }, amount: { type: ['string', 'null'] }, currency: { type: ['string', 'null'] },
        attributes: { type: ['string', 'null'], description: 'the resource\'s further fields, as JSON text' },
        metadata: {
          type: ['object', 'null'], additionalProperties: { type: 'string' },
          description: 'the client\'s own values of the resource (a transfer, a hold, a payment; {} when none); null or absent for a resource without them and for events made before metadata existed',
        },
      },
    },
  },
};

export function eventRoutes(db: Db): RouteDef[] {
  return [{
    method: 'GET', path: '/v1/events', operationId: 'listEvents', tag: 'notifications',
    summary: 'The account\'s events, newest first: what the stream and webhooks delivered', auth: { kind: 'key', scope: 'events:read' },
    query: {
      type: 'object', additionalProperties: false,
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: EVENTS_LIMIT_MAX, default: 20, description: `page size, 1..${EVENTS_LIMIT_MAX}` },
        before: { type: 'string', pattern: '^[1-9][0-9]{0,14}$', examples: ['42'], description: 'cursor: the account_seq of the last event of the previous page (its next_cursor)' },
        type: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z_]+\\.[a-z_.]+$', examples: ['transfer.completed'], description: 'only events of this type' },
        account_id: accountIdQuerySchema,
      },
    },
    response: { status: 200, description: 'a page of events', schema: listResponseSchema(EVENT_SCHEMA) },
    handler: async (request) => {
      const { limit = 20, before, type } = request.query as { limit?: number; before?: string; type?: string };
      const events = await eventsBefore(db, actingAccountId(request), before === undefined ? null : Number(before), limit + 1, type ?? null);
      const hasMore = events.length > limit;
      const page = hasMore ? events.slice(0, limit) : events;
      return { status: 200, body: { data: page.map((e) => e.event), has_more: hasMore, next_cursor: hasMore ? String(page[page.length - 1].seq) : null } };
    },
  }];
}
