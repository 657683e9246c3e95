// The wire form of the event stream GET /v1/notifications: server-sent events
// (https://html.spec.whatwg.org/multipage/server-sent-events.html) whose data is the event
// envelope of SPEC.md section 6, the same on Kafka, on SSE and in webhook deliveries
// (DESIGN.md section 5).
import type { DomainEventEnvelope } from '../../ledger/messages';

/** How long a client waits before reconnecting, in ms (the SSE `retry` field). */
export const SSE_RETRY_MS = 2_000;

/** Sent first: the reconnection delay and a comment, so clients see the stream is open. */
export const SSE_PREAMBLE = `retry: ${SSE_RETRY_MS}\n\n: connected\n\n`;

/** Keeps idle connections (and proxies in between) from timing out. */
export const SSE_HEARTBEAT = ': heartbeat\n\n';

/** A comment line; newlines are removed so the text cannot start a field. */
export const sseComment = (text: string): string => `: ${singleLine(text)}\n\n`;

/** The envelope of SPEC.md section 6 as clients see it (no account_id: the stream is the account's). */
export type PublicEvent = Omit<DomainEventEnvelope, 'account_id' | 'data'> & { data: Record<string, unknown> };

const singleLine = (text: string): string => text.replace(/[\r\n]/g, '');

/**
 * The further fields of the resource, or none when `attributes` is not a JSON object: one
 * malformed event must not break every reconnection of its account's stream.
 */
function parseAttributes(attributes: string | null): Record<string, unknown> {
  if (attributes === null) return {};
  try {
    const parsed: unknown = JSON.parse(attributes);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * `data` is `id`, `status`, `amount` and `currency` when set, the resource's `metadata` when it has
 * any (DESIGN.md section 5h: {} for a transfer without), then the attributes; the named fields win.
 */
export function toPublicEvent(envelope: DomainEventEnvelope): PublicEvent {
  const { id, status, amount, currency, attributes, metadata } = envelope.data;
  const data: Record<string, unknown> = { id, status };
  if (amount !== null && amount !== undefined) data.amount = amount;
  if (currency !== null && currency !== undefined) data.currency = currency;
  if (metadata !== null && metadata !== undefined) data.metadata = metadata;
  for (const [field, value] of Object.entries(parseAttributes(attributes ?? null))) {
    if (!(field in data)) data[field] = value;
  }
  return {
    id: envelope.id,
    type: envelope.type,
    created_at: envelope.created_at,
    environment: envelope.environment,
    resource_type: envelope.resource_type,
    resource_id: envelope.resource_id,
    account_seq: envelope.account_seq,
    data,
  };
}

/** One SSE frame: `id` (the event id, the client's Last-Event-ID), `event` (its type), `data` (one JSON line). */
export function toSseFrame(envelope: DomainEventEnvelope): string {
  const event = toPublicEvent(envelope);
  // JSON.stringify escapes newlines inside strings, so the data is always a single line.
  return `id: ${singleLine(event.id)}\nevent: ${singleLine(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
}
