// Reads the event-stream of GET /v1/notifications (src/notifications/frame.ts writes it) by the rules of
// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation:
// lines end in CRLF, LF or CR; a line starting with ':' is a comment; `field:value` drops one
// space after the colon; data lines join with LF; a blank line completes a block. One module for
// every client (payctl, the dashboard in the browser, the tests), so it imports nothing.

/** One block of the stream, up to its blank line, with its fields as the server wrote them. */
export interface SseBlock {
  /** The `id` field, null when absent. */
  id: string | null;
  /** The `event` field, null when absent (an EventSource would call it "message"). */
  event: string | null;
  /** The `data` lines joined with LF; null when there are none: a heartbeat, not an event. */
  data: string | null;
  /** The `retry` field in ms, null when absent or not all digits. */
  retryMs: number | null;
  /** Text of the comment lines (": heartbeat" is "heartbeat"). */
  comments: string[];
}

const LINE_END = /\r\n|\r|\n/;
const BYTE_ORDER_MARK = '\uFEFF';

/** Takes decoded text as it arrives, in pieces cut anywhere, and gives back each completed block. */
export class EventStreamParser {
  /** The last `id` seen, kept across blocks until another replaces it: the Last-Event-ID to resume with. */
  lastEventId = '';
  /** Text after the last complete line (a trailing CR too: an LF may follow in the next piece). */
  private pending = '';
  private started = false;
  private block: SseBlock | null = null;
  private dataLines: string[] = [];

  /** Feeds the next piece of text; returns the blocks its blank lines complete, in order. */
  push(text: string): SseBlock[] {
    let input = this.pending + text;
    if (!this.started && input !== '') {
      this.started = true;
      if (input.startsWith(BYTE_ORDER_MARK)) input = input.slice(1);
    }
    const heldCr = input.endsWith('\r') ? 1 : 0;
    const lines = input.slice(0, input.length - heldCr).split(LINE_END);
    this.pending = lines.pop()! + input.slice(input.length - heldCr);
    return this.take(lines);
  }

  /** The stream has ended: a held CR ends its line; a block without its blank line is dropped, as the spec says. */
  end(): SseBlock[] {
    const lines = this.pending.endsWith('\r') ? [this.pending.slice(0, -1)] : [];
    this.pending = '';
    const blocks = this.take(lines);
    this.block = null;
    this.dataLines = [];
    return blocks;
  }

  private take(lines: string[]): SseBlock[] {
    const blocks: SseBlock[] = [];
    for (const line of lines) {
      if (line !== '') this.field(line);
      else if (this.block) {
        this.block.data = this.dataLines.length > 0 ? this.dataLines.join('\n') : null;
        blocks.push(this.block);
        this.block = null;
        this.dataLines = [];
      }
    }
    return blocks;
  }

  private field(line: string): void {
    const block = (this.block ??= { id: null, event: null, data: null, retryMs: null, comments: [] });
    const colon = line.indexOf(':');
    const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (colon === 0) {
      block.comments.push(value);
      return;
    }
    const name = colon < 0 ? line : line.slice(0, colon);
    if (name === 'data') this.dataLines.push(value);
    else if (name === 'event') block.event = value;
    else if (name === 'id' && !value.includes('\0')) this.lastEventId = block.id = value;
    else if (name === 'retry' && /^[0-9]+$/.test(value)) block.retryMs = Number(value);
    // Any other field is ignored, as the spec says.
  }
}

/** The body of a fetch response, in Node or a browser: only what reading it needs. */
export interface ByteStream {
  getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }> };
}

/**
 * Reads `body` to its end (or until its fetch is aborted, which rejects), handing each block to
 * `onBlock` and waiting for it before reading on.
 */
export async function readEventStream(body: ByteStream, onBlock: (block: SseBlock) => void | Promise<void>): Promise<void> {
  const parser = new EventStreamParser();
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    const blocks = done ? parser.push(decoder.decode()).concat(parser.end()) : parser.push(decoder.decode(value, { stream: true }));
    for (const block of blocks) await onBlock(block);
    if (done) return;
  }
}
