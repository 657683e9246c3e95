// Server-sent events as payctl reads them: fetch with the session in the Authorization header
// (what EventSource cannot send), frames parsed as they arrive.

export interface SseEvent { id: string | null; event: string | null; data: string }

/** Splits complete frames off `buffer`; the rest waits for more bytes. */
export function parseFrames(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const blocks = buffer.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let id: string | null = null;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (event !== null || data.length > 0) events.push({ id, event, data: data.join('\n') });
  }
  return { events, rest };
}

/** Reads `response`'s body as SSE, handing each event over until the stream ends. */
export async function readEvents(response: Response, onEvent: (event: SseEvent) => Promise<void>): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    const parsed = parseFrames(buffer + decoder.decode(chunk, { stream: true }));
    buffer = parsed.rest;
    for (const event of parsed.events) await onEvent(event);
  }
}
