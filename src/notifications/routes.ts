// The event stream GET /v1/notifications (SPEC.md sections 4 "Event stream" and 6): a
// dashboard route (session JWT, or the master key naming account_id; developer keys get 403
// dashboard_access_denied from the auth layer) answering with server-sent events of the
// account's domain events. A client that reconnects with Last-Event-ID (header, or the
// last_event_id query parameter) first gets every event after that id from Postgres.
import type { Db } from '../db';
import { DomainError } from '../domain-error';
import type { NotificationHub } from './hub';
import { eventsAfter, findEventSeq, lastEventSeq } from './store';
import { eventStreamBody, REPLAY_EVENTS_MAX, type History } from './stream';
import { accountIdQuerySchema, actingAccountId } from '../http/acting-account';
import type { RouteDef, RouteRequest } from '../http/route';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const SSE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no', // nginx and the like: do not buffer the stream
};

interface Cursor {
  eventId: string;
  /** Where the client gave it, named in the error's `details`. */
  field: 'Last-Event-ID' | 'last_event_id';
}

/**
 * The client's cursor, from the Last-Event-ID header or else the query; null when neither is given.
 * @throws DomainError invalid_request (details Last-Event-ID) when the header is not an event id
 */
function readCursor(request: RouteRequest): Cursor | null {
  const header = request.koa.get('last-event-id').trim();
  if (header !== '') {
    if (!UUID_PATTERN.test(header)) throw new DomainError('invalid_request', 'Last-Event-ID must be the id (uuid) of an event of this stream', 'Last-Event-ID');
    return { eventId: header, field: 'Last-Event-ID' };
  }
  const query = request.query.last_event_id as string | undefined;
  return query ? { eventId: query, field: 'last_event_id' } : null;
}

/**
 * Where the stream starts: after the client's cursor (replayed first), or after the account's
 * latest event. An unknown cursor is an error rather than an empty replay: a payments client must
 * learn that its cursor is bad instead of silently missing events.
 * @throws DomainError invalid_request (details: the cursor's field) when the account has no such event
 */
async function historyFrom(db: Db, accountId: string, cursor: Cursor | null): Promise<History> {
  const page = (after: number, limit: number) => eventsAfter(db, accountId, after, limit);
  if (cursor === null) return { afterSeq: await lastEventSeq(db, accountId), replay: false, page };
  const afterSeq = await findEventSeq(db, accountId, cursor.eventId);
  if (afterSeq === null) throw new DomainError('invalid_request', `${cursor.field} ${cursor.eventId} is not an event of this account`, cursor.field);
  return { afterSeq, replay: true, page };
}

export function notificationRoutes(db: Db, hub: NotificationHub, heartbeatMs: number): RouteDef[] {
  return [
    {
      method: 'GET', path: '/v1/notifications', operationId: 'streamNotifications', tag: 'notifications',
      summary: 'Server-sent event stream of the account\'s transfer, payment and balance events',
      auth: { kind: 'dashboard' },
      query: {
        type: 'object', additionalProperties: false,
        properties: {
          account_id: accountIdQuerySchema,
          last_event_id: { type: 'string', format: 'uuid', description: 'replay the events after this one (alternative to the Last-Event-ID header, which wins)' },
        },
      },
      response: {
        status: 200, contentType: 'text/event-stream',
        description: `frames "id: <event id>\\nevent: <type>\\ndata: <event envelope JSON>", in the account's sequence (the envelope's account_seq: 1, 2, 3, ... in commit order, each event once); ": heartbeat" comments while idle; after a reconnection with Last-Event-ID, every later event, a replay of at most ${REPLAY_EVENTS_MAX} per connection`,
        // For an event stream, the schema describes each event (OpenAPI before 3.2), as a client's
        // event-source reader gives it: its id, its type and its data (the envelope as JSON text).
        schema: {
          type: 'object', required: ['id', 'event', 'data'],
          properties: {
            id: { type: 'string', format: 'uuid', description: 'the event id, for Last-Event-ID' },
            event: { type: 'string', description: 'the event type, e.g. transfer.completed' },
            data: { type: 'string', contentMediaType: 'application/json', description: 'the event envelope as JSON' },
            retry: { type: 'integer', description: 'the reconnection delay in milliseconds' },
          },
        },
      },
      errors: ['invalid_request', 'rate_limit_exceeded', 'service_unavailable'],
      handler: async (request) => {
        const accountId = actingAccountId(request);
        const cursor = readCursor(request);
        // Subscribe before the history is read: what commits meanwhile arrives live and is put
        // in sequence with the replay, so no event falls between replay and live.
        const subscription = hub.subscribe(accountId);
        let history: History;
        try {
          history = await historyFrom(db, accountId, cursor);
        } catch (error) {
          subscription.close('unsubscribed');
          throw error;
        }
        const body = eventStreamBody({ subscription, history, heartbeatMs });
        request.koa.req.socket.setTimeout(0); // the stream is long-lived by design
        request.koa.res.once('close', () => body.destroy()); // the client went away
        return { status: 200, body, headers: SSE_HEADERS };
      },
    },
  ];
}
