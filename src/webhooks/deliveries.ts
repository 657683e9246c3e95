// The webhook deliveries store (migrations/20261123160000_webhook_deliveries.ts): which events go
// to which endpoints, claiming what is due, and recording what each attempt got. A claim takes an
// attempt number and a lease in one statement (`next_attempt_at` moves past the attempt's longest
// possible run), so dispatchers never send a delivery twice at once, and one that dies mid-attempt
// leaves it due again once the lease ends. An outcome is recorded only if no later claim took the
// delivery meanwhile.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db';
import type { AttemptResult } from './post';
import type { WebhookEndpointRow } from './endpoints';
import { wallNow } from '../clock';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface DeliveryRow {
  id: string; endpoint_id: string; event_id: string; event_type: string; account_seq: string | null; body: string; status: DeliveryStatus;
  attempts: number; next_attempt_at: Date | null; last_attempt_at: Date | null; last_response_status: number | null; delivered_at: Date | null; created_at: Date;
}

export interface AttemptRow {
  delivery_id: string; attempt: number; started_at: Date; duration_ms: number; response_status: number | null; response_body: string | null; error: string | null;
}

/** An event of the account's sequence, as its webhook body. */
export interface EventToDeliver {
  id: string; type: string; accountId: string; createdAt: Date; accountSeq: number | null; body: string;
}

/** A new delivery: claimed at once (the sender has room for it) or left due for the next claim. */
export interface NewDelivery { event: EventToDeliver; endpointId: string; claim: boolean }

/** What an attempt came to, and the delivery's state after it. */
export interface AttemptOutcome {
  delivery: DeliveryRow;
  result: AttemptResult;
  next: { status: 'delivered' } | { status: 'pending'; at: Date } | { status: 'failed' };
}

/**
 * Whether an endpoint wants an event: its account's, a type it subscribed to, made after the
 * endpoint. A disabled endpoint wants it too: the delivery waits, pending, until it is enabled.
 */
export function wants(endpoint: WebhookEndpointRow, event: EventToDeliver): boolean {
  return endpoint.account_id === event.accountId && event.createdAt >= endpoint.created_at
    && (endpoint.events.length === 0 || endpoint.events.includes(event.type));
}

/**
 * The event `POST /v1/webhooks/{id}/test` sends: outside the account's sequence, so no account_seq.
 * `id` derives from the request's Idempotency-Key execution, so a retry after its request died
 * finds the delivery the first made (one per endpoint and event) instead of sending a second.
 */
export function testEvent(endpoint: WebhookEndpointRow, environment: string, id: string, now = wallNow()): EventToDeliver {
  const body = {
    id, type: 'webhook.test', created_at: now.toISOString(), environment, resource_type: 'webhook_endpoint', resource_id: endpoint.id,
    account_seq: null, data: { id: endpoint.id, status: endpoint.enabled ? 'enabled' : 'disabled', url: endpoint.url },
  };
  return { id, type: body.type, accountId: endpoint.account_id, createdAt: now, accountSeq: null, body: JSON.stringify(body) };
}

export class WebhookDeliveries {
  /** `leaseMs`: how long a claimed attempt may run before the delivery is due again (the API claims nothing). */
  constructor(private readonly db: Db, private readonly leaseMs = 0) {}

  async endpointsByIds(ids: string[]): Promise<Map<string, WebhookEndpointRow>> {
    const rows: WebhookEndpointRow[] = ids.length === 0 ? [] : await this.db('webhook_endpoints').whereIn('id', [...new Set(ids)]).select('*');
    return new Map(rows.map((row) => [row.id, row]));
  }

  /**
   * Records new deliveries; one already recorded (its event read again from Kafka) is left as it
   * is. Returns the rows written, the claimed ones with their first attempt leased.
   */
  async insert(deliveries: NewDelivery[], now = wallNow()): Promise<DeliveryRow[]> {
    if (deliveries.length === 0) return [];
    const lease = new Date(now.getTime() + this.leaseMs);
    return this.db('webhook_deliveries').insert(deliveries.map(({ event, endpointId, claim }) => ({
      id: randomUUID(), endpoint_id: endpointId, event_id: event.id, event_type: event.type, account_seq: event.accountSeq, body: event.body,
      status: 'pending', attempts: claim ? 1 : 0, next_attempt_at: claim ? lease : now, last_attempt_at: claim ? now : null, created_at: now,
    }))).onConflict(['endpoint_id', 'event_id']).ignore().returning('*');
  }

  /**
   * Claims up to `limit` due deliveries of enabled endpoints, at most `perEndpoint` per endpoint
   * counting the slots it already holds here (`used`), in turns: each endpoint's oldest due
   * delivery first, then each one's second, and so on, so an endpoint with a backlog cannot crowd
   * out the others. The endpoints with pending deliveries are found by hopping through the index
   * of pending deliveries by endpoint (one probe each, whatever its backlog); only the enabled ones
   * with room have their due deliveries read, a few each. A disabled endpoint's deliveries stay
   * pending, unread, until it is enabled again.
   */
  async claimDue(limit: number, perEndpoint: number, used: Map<string, number>): Promise<DeliveryRow[]> {
    const { rows } = await this.db.raw(
      `WITH RECURSIVE busy(endpoint_id) AS (
         (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.endpoint_id > b.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
           FROM busy b WHERE b.endpoint_id IS NOT NULL),
       room AS (
         SELECT e.id, least(? - coalesce(u.used, 0), ?) AS room
           FROM busy b JOIN webhook_endpoints e ON e.id = b.endpoint_id AND e.enabled
           LEFT JOIN unnest(?::uuid[], ?::int[]) AS u(endpoint_id, used) ON u.endpoint_id = e.id),
       candidates AS (
         SELECT c.id, c.next_attempt_at, row_number() OVER (PARTITION BY r.id ORDER BY c.next_attempt_at) AS turn
           FROM room r CROSS JOIN LATERAL (
             SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
              WHERE d.endpoint_id = r.id AND d.status = 'pending' AND d.next_attempt_at <= now()
              ORDER BY d.next_attempt_at LIMIT greatest(r.room, 0)) c),
       chosen AS (SELECT id FROM candidates ORDER BY turn, next_attempt_at LIMIT ?),
       due AS (
         SELECT d.id FROM webhook_deliveries d JOIN chosen c ON c.id = d.id
          WHERE d.status = 'pending' AND d.next_attempt_at <= now() FOR UPDATE OF d SKIP LOCKED)
       UPDATE webhook_deliveries d SET attempts = d.attempts + 1, last_attempt_at = now(), next_attempt_at = now() + ? * interval '1 millisecond'
         FROM due WHERE d.id = due.id RETURNING d.*`,
      [perEndpoint, limit, [...used.keys()], [...used.values()], limit, this.leaseMs],
    );
    return rows;
  }

  /** Writes the attempts and the deliveries' new states, in one transaction. */
  async record(outcomes: AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.db.transaction(async (trx) => {
      await trx('webhook_delivery_attempts').insert(outcomes.map(({ delivery, result }) => ({
        delivery_id: delivery.id, attempt: delivery.attempts, started_at: result.startedAt, duration_ms: result.durationMs,
        response_status: result.status, response_body: result.responseBody, error: result.error,
      }))).onConflict(['delivery_id', 'attempt']).ignore();
      await trx.raw(
        `UPDATE webhook_deliveries d SET status = v.status, next_attempt_at = v.next_attempt_at, last_response_status = v.response_status,
                delivered_at = CASE WHEN v.status = 'delivered' THEN v.finished_at ELSE d.delivered_at END
           FROM unnest(?::uuid[], ?::int[], ?::text[], ?::timestamptz[], ?::int[], ?::timestamptz[])
                AS v(id, attempt, status, next_attempt_at, response_status, finished_at)
          WHERE d.id = v.id AND d.attempts = v.attempt`,
        [
          outcomes.map((o) => o.delivery.id), outcomes.map((o) => o.delivery.attempts), outcomes.map((o) => o.next.status),
          outcomes.map((o) => (o.next.status === 'pending' ? o.next.at.toISOString() : null)), outcomes.map((o) => o.result.status),
          outcomes.map((o) => new Date(o.result.startedAt.getTime() + o.result.durationMs).toISOString()),
        ] as unknown as Knex.RawBinding[],
      );
    });
  }

  /** An endpoint's deliveries, for a keyset page (newest first), optionally of one status. */
  query(endpointId: string, status?: DeliveryStatus) {
    const query = this.db('webhook_deliveries').where('endpoint_id', endpointId).select('*');
    return status ? query.andWhere('status', status) : query;
  }

  async byEvent(endpointId: string, eventId: string): Promise<DeliveryRow | undefined> {
    return this.db('webhook_deliveries').where({ endpoint_id: endpointId, event_id: eventId }).first();
  }

  async byId(endpointId: string, id: string): Promise<DeliveryRow | undefined> {
    return this.db('webhook_deliveries').where({ endpoint_id: endpointId, id }).first();
  }

  /** The attempts of these deliveries, newest first. */
  async attemptsOf(deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
    const rows: AttemptRow[] = deliveryIds.length === 0 ? [] : await this.db('webhook_delivery_attempts')
      .whereIn('delivery_id', deliveryIds).orderBy([{ column: 'delivery_id' }, { column: 'attempt', order: 'desc' }]).select('*');
    const byDelivery = new Map<string, AttemptRow[]>();
    for (const row of rows) byDelivery.set(row.delivery_id, [...(byDelivery.get(row.delivery_id) ?? []), row]);
    return byDelivery;
  }

  /** Makes a delivery due now, whatever its state: one more attempt, beyond the schedule if need be. */
  async retryNow(id: string): Promise<DeliveryRow> {
    const [row] = await this.db('webhook_deliveries').where('id', id).update({ status: 'pending', next_attempt_at: this.db.fn.now() }).returning('*');
    return row;
  }

  /** Makes every failed delivery of the endpoint made at or after `since` due now; returns how many. */
  async recover(endpointId: string, since: Date): Promise<number> {
    return this.db('webhook_deliveries').where({ endpoint_id: endpointId, status: 'failed' }).andWhere('created_at', '>=', since)
      .update({ status: 'pending', next_attempt_at: this.db.fn.now() });
  }
}
