// The account's live events (GET /v1/notifications, server-sent events). EventSource cannot send
// the session in a header, so the stream is read with fetch; after a drop it reconnects with
// Last-Event-ID, and the API replays what was missed first.
import { readEventStream } from '../event-stream';
import { authorization } from './api';

export interface DomainEvent {
  id: string;
  type: string;
  created_at: string;
  resource_type: string;
  resource_id: string;
  /** The resource's id, status, amount and currency, then its further fields (a balance alert's threshold…). */
  data: { id: string; status: string; amount: string | null; currency: string | null; [attribute: string]: unknown };
}

/** Follows the stream until `signal` aborts; `onEvent` gets each event once, in order. */
export async function followEvents(onEvent: (event: DomainEvent) => void, onState: (connected: boolean) => void, signal: AbortSignal): Promise<void> {
  let lastEventId: string | null = null;
  let backoffMs = 500;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = { ...authorization(), Accept: 'text/event-stream' };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      const response = await fetch('/v1/notifications', { headers, signal });
      if (!response.ok || !response.body) throw new Error(`the event stream answered ${response.status}`);
      onState(true);
      backoffMs = 500;
      await readEventStream(response.body, (block) => {
        if (block.data === null) return; // a heartbeat or a comment
        if (block.id) lastEventId = block.id;
        onEvent(JSON.parse(block.data) as DomainEvent);
      });
    } catch {
      if (signal.aborted) return;
    }
    onState(false);
    await new Promise((resolve) => setTimeout(resolve, backoffMs));
    backoffMs = Math.min(backoffMs * 2, 10_000);
  }
}
