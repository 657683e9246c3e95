// `payctl listen`: follows the account's event stream and POSTs each event to a local URL, signed
// exactly as a webhook delivery (Standard Webhooks: webhook-id, webhook-timestamp and
// webhook-signature, v1 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes), with a
// secret of its own printed once at the start, so a handler verifies in development as it will in
// production. A dropped stream is resumed with Last-Event-ID: each event is forwarded once.
import { createHmac, randomBytes } from 'node:crypto';
import { ApiError, UsageError, type Connection } from './api';
import { readEventStream, type SseBlock } from '../event-stream';

const RECONNECT_MS_MAX = 5_000;
/** Event ids remembered to forward each once, across reconnections. */
const SEEN_MAX = 10_000;

export interface ListenOptions { forwardTo: string; events: string[] | null; secret?: string }

export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

const time = () => new Date().toISOString().slice(11, 19);

/** A block that is an event: the stream's events always carry all three. */
type StreamEvent = SseBlock & { id: string; event: string; data: string };

async function forward(url: string, secret: string, event: StreamEvent): Promise<string> {
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    // Redirects are not followed: a signed event goes to the address given, nowhere else.
    const response = await fetch(url, {
      method: 'POST', body: event.data, redirect: 'manual',
      headers: { 'content-type': 'application/json', 'webhook-id': event.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature(secret, event.id, timestamp, event.data) },
    });
    await response.arrayBuffer();
    return response.status >= 300 && response.status < 400 ? `${response.status} (redirect to ${response.headers.get('location') ?? '?'} not followed)` : String(response.status);
  } catch (error) {
    return `failed (${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message})`;
  }
}

/** Follows the stream until `signal` aborts; never returns otherwise. */
export async function listen(connection: Connection, options: ListenOptions, print: (line: string) => void, signal: AbortSignal): Promise<void> {
  if (!connection.session) {
    throw new UsageError('listen follows the event stream, which takes a session, not an API key: run payctl login --email <you@example.com> (your sandbox account\'s email and password)');
  }
  const secret = options.secret ?? newSigningSecret();
  print(`Ready! Forwarding events to ${options.forwardTo}. Your webhook signing secret is ${secret} (Ctrl-C to stop)`);
  const seen = new Set<string>();
  let lastEventId = null as string | null;
  let backoffMs = 250;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${connection.session}`, accept: 'text/event-stream' };
      if (lastEventId !== null) headers['last-event-id'] = lastEventId;
      // The session goes to the base URL alone: a redirect (to wherever) is not followed.
      const response = await fetch(`${connection.baseUrl}/v1/notifications`, { headers, signal, redirect: 'manual' });
      if (response.status >= 300 && response.status < 400) {
        throw new UsageError(`the event stream answered ${response.status} to ${response.headers.get('location') ?? 'somewhere else'}; payctl does not follow redirects with your session: give the service's own address (payctl login --base-url)`);
      }
      if (response.status === 401 || response.status === 403) {
        const body = await response.json().catch(() => ({})) as { error?: string; message?: string };
        throw new ApiError(response.status, body.error ?? 'unauthorized', body.message ?? 'the stream refused the session', null);
      }
      if (!response.ok || !response.body) throw new Error(`the stream answered ${response.status}`);
      backoffMs = 250;
      await readEventStream(response.body, async (block) => {
        if (!block.id || !block.event || block.data === null) return; // a heartbeat or a comment
        const event = block as StreamEvent;
        lastEventId = event.id;
        if (seen.has(event.id)) return;
        seen.add(event.id);
        if (seen.size > SEEN_MAX) seen.delete(seen.values().next().value!);
        if (options.events && !options.events.includes(event.event)) return;
        const status = await forward(options.forwardTo, secret, event);
        print(`${time()}  ${event.event.padEnd(22)} ${event.id}  -> ${status}`);
      });
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError || error instanceof UsageError) throw error;
    }
    if (signal.aborted) return;
    print(`${time()}  stream dropped; reconnecting${lastEventId ? ` after ${lastEventId}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, backoffMs));
    backoffMs = Math.min(RECONNECT_MS_MAX, backoffMs * 2);
  }
}
