// A small server-sent events client for tests: fetch plus a parser of the event-stream format
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
// Frames are kept as they arrive, comment-only blocks (": heartbeat") included, so a test can
// assert on exactly what the server wrote.

/** One block of the stream, up to a blank line. */
export interface SseFrame {
  /** `id:` field, null when absent. */
  id: string | null;
  /** `event:` field, null when absent. */
  event: string | null;
  /** `data:` lines joined with "\n", null when absent. */
  data: string | null;
  /** `retry:` field in ms, null when absent. */
  retry: number | null;
  /** Text of the comment lines (": heartbeat" → "heartbeat"). */
  comments: string[];
}

export interface EventStreamClient {
  status: number;
  headers: Headers;
  /** The next frame of any kind; rejects after `timeoutMs` or when the stream has ended. */
  next(timeoutMs?: number): Promise<SseFrame>;
  /** The next frame with an `event:` field, skipping comments and retry-only frames. */
  nextEvent(timeoutMs?: number): Promise<SseFrame & { id: string; event: string; data: string }>;
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

/** Parses complete blocks from `buffer`; returns the frames and the unparsed rest. */
export function parseSseBlocks(buffer: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  const lines = buffer.split(/\r\n|\r|\n/);
  const rest = lines.pop() ?? ''; // the last piece has no terminator yet
  let frame: SseFrame | null = null;
  let consumed = 0;
  let dataLines: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line === '') {
      if (frame) {
        frame.data = dataLines.length > 0 ? dataLines.join('\n') : null;
        frames.push(frame);
      }
      frame = null;
      dataLines = [];
      consumed = i + 1;
      continue;
    }
    frame ??= { id: null, event: null, data: null, retry: null, comments: [] };
    if (line.startsWith(':')) {
      frame.comments.push(line.slice(1).replace(/^ /, ''));
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') frame.id = value;
    else if (field === 'event') frame.event = value;
    else if (field === 'data') dataLines.push(value);
    else if (field === 'retry' && /^\d+$/.test(value)) frame.retry = Number(value);
  }
  // Lines of a block not yet closed by a blank line stay in the buffer.
  const pending = lines.slice(consumed);
  return { frames, rest: pending.length > 0 ? `${pending.join('\n')}\n${rest}` : rest };
}

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

  const frames: SseFrame[] = [];
  let done = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const notify = () => { wake?.(); wake = null; };

  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        const parsed = parseSseBlocks(buffer);
        buffer = parsed.rest;
        if (parsed.frames.length > 0) {
          frames.push(...parsed.frames);
          notify();
        }
      }
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
        if (frame.event !== null) return frame as SseFrame & { id: string; event: string; data: string };
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
  baseUrl: string, token: string, onFrame: (frame: SseFrame) => void, signal: AbortSignal,
  headers: Record<string, string> = {}, onEnd: () => void = () => undefined,
): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/notifications`, { headers: { authorization: `Bearer ${token}`, ...headers }, signal });
  if (response.status !== 200 || !response.body) throw new Error(`event stream refused: ${response.status}`);
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const parsed = parseSseBlocks(buffer + decoder.decode(chunk, { stream: true }));
        buffer = parsed.rest;
        parsed.frames.forEach(onFrame);
      }
    } catch { /* closed */ }
    onEnd();
  })();
}
