// Reads a JSON request body with a size bound. Errors are the SPEC.md error body, never a
// framework default page.
import type Koa from 'koa';
import { DomainError } from '../errors';

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const mediaType = header.split(';')[0].trim().toLowerCase();
  return mediaType === 'application/json' || /^application\/[\w.+-]+\+json$/.test(mediaType);
}

async function readText(ctx: Koa.Context, limitBytes: number): Promise<string> {
  const declared = Number.parseInt(ctx.get('content-length') || '', 10);
  if (Number.isFinite(declared) && declared > limitBytes) {
    throw new DomainError('invalid_request', `request body exceeds the limit of ${limitBytes} bytes`, 'body');
  }
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > limitBytes) {
      throw new DomainError('invalid_request', `request body exceeds the limit of ${limitBytes} bytes`, 'body');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses the body of a write request that declares one; `undefined` when it is empty. */
export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<unknown> {
  if (!isJsonContentType(ctx.get('content-type') || undefined)) {
    throw new DomainError('invalid_request', 'write requests must be sent with Content-Type: application/json', 'Content-Type');
  }
  const text = await readText(ctx, limitBytes);
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new DomainError('invalid_request', 'request body is not valid JSON', 'body');
  }
}
