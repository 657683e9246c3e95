// A small server-sent events client for tests: fetch plus the clients' one event-stream parser
// (src/event-stream.ts). Blocks are kept as they arrive, comment-only blocks
// (": heartbeat") included, so a test can assert on exactly what the server wrote.
import { readEventStream, type SseBlock } from '../../src/event-stream';

export interface EventStreamClient {
  status: number;
  headers: Headers;
  /** The next frame of any kind; rejects after `timeoutMs` or when the stream has ended. */
  next(timeoutMs?: number): Promise<SseBlock>;
  /** The next frame with an `event:` field, skipping comments and retry-only frames. */
  nextEvent(timeoutMs?: number): Promise<SseBlock & { id: string; event: string; data: string }>;
  /** Resolves once the server has ended the stream (within `timeoutMs`). */
  ended(timeoutMs?: number): Promise<void>;
  close(): void;
}

export interface EventStreamOptions {
  lastEventId?: string;
  /** Extra query string, e.g. "account_id=…". */
  query?: string;
}

const NEXT_TIMEOUT_MS_DEFAULT = 10_000;

/** GET /v1/notifications with `token`; reads frames in the background until closed. */
export async function openEventStream(baseUrl: string, token: string, options: EventStreamOptions = {}): Promise<EventStreamClient> {
  const aborter = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  const url = `${baseUrl}/v1/notifications${options.query ? `?${options.query}` : ''}`;
  const response = await fetch(url, { headers, signal: aborter.signal });
  if (response.status !== 200 || !response.body) {
    const text = await response.text();
    throw new Error(`event stream refused: ${response.status} ${text}`);
  }

  const body = response.body;
  const frames: SseBlock[] = [];
  let done = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const notify = () => { wake?.(); wake = null; };

  void (async () => {
    try {
      await readEventStream(body, (block) => {
        frames.push(block);
        notify();
      });
    } catch (error) {
      if (!aborter.signal.aborted) failure = error as Error;
    } finally {
      done = true;
      notify();
    }
  })();

  const waitFor = async <T>(take: () => T | undefined, timeoutMs: number, what: string): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const taken = take();
      if (taken !== undefined) return taken;
      if (done) throw new Error(`the stream ended while waiting for ${what}${failure ? `: ${failure.message}` : ''}`);
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remainingMs);
        wake = () => { clearTimeout(timer); resolve(); };
      });
    }
  };

  return {
    status: response.status,
    headers: response.headers,
    next: (timeoutMs = NEXT_TIMEOUT_MS_DEFAULT) => waitFor(() => frames.shift(), timeoutMs, 'a frame'),
    nextEvent: (timeoutMs = NEXT_TIMEOUT_MS_DEFAULT) => waitFor(() => {
      while (frames.length > 0) {
        const frame = frames.shift()!;
        if (frame.event !== null) return frame as SseBlock & { id: string; event: string; data: string };
      }
      return undefined;
    }, timeoutMs, 'an event'),
    ended: async (timeoutMs = NEXT_TIMEOUT_MS_DEFAULT) => { await waitFor(() => (done ? true : undefined), timeoutMs, 'the end of the stream'); },
    close: () => aborter.abort(),
  };
}

/**
 * Opens `baseUrl`'s event stream with `token` and hands every frame to `onFrame` in the
 * background until `signal` aborts; resolves once the stream is open.
 */
export async function followEventStream(
  baseUrl: string, token: string, onFrame: (frame: SseBlock) => void, signal: AbortSignal,
  headers: Record<string, string> = {}, onEnd: () => void = () => undefined,
): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/notifications`, { headers: { authorization: `Bearer ${token}`, ...headers }, signal });
  if (response.status !== 200 || !response.body) throw new Error(`event stream refused: ${response.status}`);
  void readEventStream(response.body, onFrame).catch(() => { /* closed */ }).then(onEnd);
}
