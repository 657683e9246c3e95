// One delivery attempt over HTTP: POST the body with its headers, wait at most `timeoutMs` for
// the whole answer, keep at most RESPONSE_BODY_KEPT bytes of it, follow no redirect. Never throws:
// a refused connection, a timeout or a private address refused is an attempt that failed, with
// its reason. Where private addresses are refused, an IP literal is checked as the URL parser
// wrote it (Node connects to a literal without any lookup) and names are resolved through
// publicOnlyLookup at every connection.
//
// The reason the merchant reads in the delivery log is generic (`connection_failed`: refused,
// unresolvable, a refused address, cut off; `timeout`; `http_<status>`): an address,
// a port or an errno there would make endpoints a scanner of the network the service runs in
// (which ports answer, which names resolve inside). The detail goes to the operator's log only.
import http from 'node:http';
import https from 'node:https';
import { connectionHost, isPrivateAddress, publicOnlyLookup } from './addresses';
import { wallNow } from '../clock';

/** What an attempt keeps of the receiver's answer: enough to debug it, never a whole page. */
export const RESPONSE_BODY_KEPT = 1024;

export interface AttemptResult {
  startedAt: Date;
  durationMs: number;
  /** The receiver's HTTP status, or null when none arrived. */
  status: number | null;
  responseBody: string | null;
  retryAfter: string | undefined;
  /** Why the attempt failed: `connection_failed`, `timeout` or `http_<status>`; null for a 2xx. */
  error: string | null;
  /** What happened, for the operator's log only: it may name addresses, ports and errnos. */
  detail?: string;
}

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  publicOnly: boolean;
}

export function postWebhook({ url, headers, body, timeoutMs, publicOnly }: PostOptions): Promise<AttemptResult> {
  const startedAt = wallNow();
  const started = process.hrtime.bigint();
  const elapsed = () => Number((process.hrtime.bigint() - started) / 1_000_000n);
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Omit<AttemptResult, 'startedAt' | 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ startedAt, durationMs: elapsed(), ...result });
    };
    const fail = (error: 'connection_failed' | 'timeout', detail: string) => finish({ status: null, responseBody: null, retryAfter: undefined, error, detail });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return fail('connection_failed', 'the endpoint url is not a valid URL');
    }
    const { host, literal } = connectionHost(target);
    if (publicOnly && literal && isPrivateAddress(host)) return fail('connection_failed', `the endpoint's address ${host} is private`);
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
        const status = response.statusCode ?? null;
        finish({
          status, responseBody: keptBytes > RESPONSE_BODY_KEPT ? `${text}…` : text,
          retryAfter: response.headers['retry-after'], error: status !== null && status >= 200 && status < 300 ? null : `http_${status}`,
        });
      });
      response.on('error', (error) => fail('connection_failed', `the response broke off: ${error.message}`));
    });
    timer = setTimeout(() => {
      fail('timeout', `no complete answer within ${timeoutMs} ms`);
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => fail('connection_failed', error.code ? `${error.code}: ${error.message}` : error.message));
    request.end(body);
  });
}
