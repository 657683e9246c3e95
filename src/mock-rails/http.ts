// HTTP plumbing of the mock rails: one error type, one way to answer, bounded body reads.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body a mock partner accepts; past it the request is 413. */
export const BODY_BYTES_MAX = 64 * 1024;

/**
 * A partner-side failure with the status and body the partner answers. The body is the
 * OAuth-style `{ error, message? }` that real partner APIs use, not our SPEC.md error body.
 */
export class RailError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message?: string, headers: Record<string, string> = {}) {
    super(message ?? code);
    this.name = 'RailError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }

  body(): { error: string; message?: string } {
    return this.message === this.code ? { error: this.code } : { error: this.code, message: this.message };
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload).toString(),
    'cache-control': 'no-store',
  });
  res.end(payload);
}

export function sendRailError(res: ServerResponse, error: RailError): void {
  sendJson(res, error.status, error.body(), error.headers);
}

export async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > BODY_BYTES_MAX) {
      throw new RailError(413, 'invalid_request', `request body exceeds ${BODY_BYTES_MAX} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** The form body of an OAuth token request (RFC 6749 section 4: form-encoded). */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    throw new RailError(400, 'invalid_request', 'token requests must be application/x-www-form-urlencoded');
  }
  return new URLSearchParams(await readText(req));
}

/** The JSON object body of an API write; anything else is 400 invalid_request. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (mediaType(req) !== 'application/json') {
    throw new RailError(400, 'invalid_request', 'request body must be application/json');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readText(req));
  } catch {
    throw new RailError(400, 'invalid_request', 'request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new RailError(400, 'invalid_request', 'request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/** The credentials of `Authorization: Basic base64(client_id:client_secret)`, or null. */
export function basicCredentials(req: IncomingMessage): { clientId: string; clientSecret: string } | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(req.headers.authorization ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { clientId: decoded.slice(0, colon), clientSecret: decoded.slice(colon + 1) };
}

/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(req: IncomingMessage): string | null {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return match ? match[1] : null;
}
