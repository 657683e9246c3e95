// A lean HTTP/1.1 keep-alive client for load generation. The load generator shares the
// machine's two cores with the service and the stack, so every microsecond it spends is taken
// from what is measured: node:http costs about 170 µs of CPU per request here, this one a
// fraction of it. One request at a time per connection (closed loop); it understands the
// responses the service sends (Content-Length or chunked bodies) and nothing more.
import net from 'node:net';

export interface RawResponse { status: number; body: Buffer }

const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

/** The bytes of one request; the body, if any, is sent with its Content-Length. */
export function encodeRequest(method: string, path: string, headers: Record<string, string>, body?: string): Buffer {
  let head = `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
  return Buffer.from(`${head}\r\n${body ?? ''}`);
}

interface Waiter { resolve(response: RawResponse): void; reject(error: Error): void; timer: NodeJS.Timeout }

export class RawHttpConnection {
  private readonly socket: net.Socket;
  private received: Buffer = Buffer.alloc(0);
  private waiter: Waiter | null = null;
  private closedWith: Error | null = null;

  constructor(port: number, private readonly timeoutMs = 10_000) {
    this.socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => {
      this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
      this.parse();
    });
    const fail = (error: Error) => {
      this.closedWith = error;
      this.settle(null, error);
    };
    this.socket.on('error', fail);
    this.socket.on('close', () => fail(new Error('connection closed')));
  }

  /** Sends one request (bytes from encodeRequest) and resolves with the status and body. */
  send(request: Buffer): Promise<RawResponse> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.waiter) return Promise.reject(new Error('one request at a time per connection'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(null, new Error(`no answer in ${this.timeoutMs} ms`));
        this.socket.destroy();
      }, this.timeoutMs);
      this.waiter = { resolve, reject, timer };
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private settle(response: RawResponse | null, error: Error | null): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = null;
    clearTimeout(waiter.timer);
    if (response) waiter.resolve(response);
    else waiter.reject(error!);
  }

  /** Completes the waiting request once its whole response has arrived. */
  private parse(): void {
    const headerEnd = this.received.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const head = this.received.toString('latin1', 0, headerEnd);
    const status = Number(head.slice(9, 12));
    const bodyStart = headerEnd + HEADER_END.length;
    const lengthMatch = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let body: Buffer;
    let consumed: number;
    if (lengthMatch) {
      const length = Number(lengthMatch[1]);
      if (this.received.length < bodyStart + length) return;
      body = this.received.subarray(bodyStart, bodyStart + length);
      consumed = bodyStart + length;
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const end = this.received.indexOf(CHUNKED_END, bodyStart - 2);
      if (end < 0) return;
      body = dechunk(this.received.subarray(bodyStart, end + CHUNKED_END.length));
      consumed = end + CHUNKED_END.length;
    } else {
      body = Buffer.alloc(0); // 204, 304 and the like
      consumed = bodyStart;
    }
    this.received = this.received.subarray(consumed);
    this.settle({ status, body }, null);
  }
}

function dechunk(chunked: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = chunked.indexOf('\r\n', at);
    const size = Number.parseInt(chunked.toString('latin1', at, lineEnd), 16);
    if (!size) return Buffer.concat(parts);
    parts.push(chunked.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
