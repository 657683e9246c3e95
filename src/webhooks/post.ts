// One delivery attempt over HTTP: POST the body with its headers, wait at most `timeoutMs` for
// the whole answer, keep at most RESPONSE_BODY_KEPT bytes of it, follow no redirect. Never throws:
// a refused connection, a timeout or a private address in live is an attempt that failed, with
// its reason. In live, names are resolved through publicOnlyLookup at every connection.
import http from 'node:http';
import https from 'node:https';
import { publicOnlyLookup } from './addresses';

/** What an attempt keeps of the receiver's answer: enough to debug it, never a whole page. */
export const RESPONSE_BODY_KEPT = 1024;

export interface AttemptResult {
  startedAt: Date;
  durationMs: number;
  /** The receiver's HTTP status, or null when none arrived. */
  status: number | null;
  responseBody: string | null;
  retryAfter: string | undefined;
  /** Why no status arrived (timeout, connection error), or null. */
  error: string | null;
}

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  publicOnly: boolean;
}

export function postWebhook({ url, headers, body, timeoutMs, publicOnly }: PostOptions): Promise<AttemptResult> {
  const startedAt = new Date();
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'startedAt' | 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ startedAt, durationMs: elapsed(), ...result });
    };
    const fail = (error: string) => finish({ status: null, responseBody: null, retryAfter: undefined, error });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return fail('the endpoint url is not a valid URL');
    }
    const transport = target.protocol === 'https:' ? https : http;
    const request = transport.request(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'payments-webhooks/1' },
      agent: false, // one connection per attempt: a receiver that hangs holds only its own socket
      ...(publicOnly ? { lookup: publicOnlyLookup } : {}),
    }, (response) => {
      const kept: Buffer[] = [];
      let keptBytes = 0;
      response.on('data', (chunk: Buffer) => {
        if (keptBytes < RESPONSE_BODY_KEPT) kept.push(chunk.subarray(0, RESPONSE_BODY_KEPT - keptBytes));
        keptBytes += chunk.length;
      });
      response.on('end', () => {
        const text = Buffer.concat(kept).toString('utf8');
        finish({
          status: response.statusCode ?? null, responseBody: keptBytes > RESPONSE_BODY_KEPT ? `${text}…` : text,
          retryAfter: response.headers['retry-after'], error: null,
        });
      });
      response.on('error', (error) => fail(`the response broke off: ${error.message}`));
    });
    const timer = setTimeout(() => {
      fail(`no complete answer within ${timeoutMs} ms`);
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => fail(error.code ? `${error.code}: ${error.message}` : error.message));
    request.end(body);
  });
}
