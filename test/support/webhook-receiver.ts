// A webhook receiver for tests: a real HTTP server that records every request and answers as the
// test tells it (a status, headers, or never). `verify` checks a request the way the README tells
// an integrator to, written apart from the service's own signing code.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './http';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  event: any;
  at: number;
}

/** What the receiver answers: a status (and headers, body), or 'hang': no answer at all. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** The most requests it held unanswered at once. */
  maxOpen: number;
  /** Decides each answer; `n` counts this receiver's requests from 1. */
  answer: (request: Received, n: number) => Answer;
  /** Waits until `count` requests matching `which` arrived, and returns them. */
  waitFor(count: number, which?: (r: Received) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(answer: Receiver['answer'] = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  let open = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: Received = { headers: request.headers, body, event: JSON.parse(body), at: Date.now() };
      received.push(entry);
      const decided = receiver.answer(entry, received.length);
      if (decided === 'hang') {
        open++;
        receiver.maxOpen = Math.max(receiver.maxOpen, open);
        response.once('close', () => { open--; });
        return;
      }
      response.writeHead(decided.status, decided.headers ?? {}).end(decided.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    maxOpen: 0,
    answer,
    waitFor: (count, which = () => true, timeoutMs = 15_000) => eventually(async () => {
      const matching = received.filter(which);
      return matching.length >= count ? matching : undefined;
    }, timeoutMs, `${count} webhook requests`),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return receiver;
}

/**
 * The receiver's check: the timestamp within `toleranceSeconds` of now, and one of the
 * space-separated `v1,` signatures equal to base64 HMAC-SHA256 of `id.timestamp.body` under the
 * secret's bytes (the base64 after `whsec_`).
 */
export function verify(secret: string, headers: IncomingHttpHeaders, body: string, toleranceSeconds = 300): boolean {
  const id = String(headers['webhook-id']);
  const timestamp = Number(headers['webhook-timestamp']);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(`${id}.${timestamp}.${body}`).digest();
  return String(headers['webhook-signature']).split(' ').some((signature) => {
    const [version, value] = signature.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
