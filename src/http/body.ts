// Reads a JSON request body with a size bound. Errors are the SPEC.md error body, never a
// framework default page.
import type Koa from 'koa';
import { unstorable } from '../../ledger/screen';
import { DomainError } from '../domain-error';

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

/**
 * No request body of this API nests deeper than a few levels; a body of thousands of levels
 * (which fits in the size limit) would exhaust the stack of every recursive step after parsing:
 * validation, fingerprinting, logging.
 */
export const NESTING_DEPTH_MAX = 32;

/** The deepest nesting of objects and arrays in JSON text, brackets inside strings excluded. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** Parses the body of a write request that declares one; `undefined` when it is empty. */
export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<unknown> {
  if (!isJsonContentType(ctx.get('content-type') || undefined)) {
    throw new DomainError('invalid_request', 'write requests must be sent with Content-Type: application/json', 'Content-Type');
  }
  const text = await readText(ctx, limitBytes);
  if (text.trim() === '') return undefined;
  if (nestingDepth(text) > NESTING_DEPTH_MAX) {
    throw new DomainError('invalid_request', `request body is nested deeper than ${NESTING_DEPTH_MAX} levels`, 'body');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new DomainError('invalid_request', 'request body is not valid JSON', 'body');
  }
}


/**
 * Refuses a request value holding text Postgres cannot store, naming the field in dotted form
 * (`recipient.bank.bank_name`, `items.3`; `location` for the root). Object keys count too.
 * Iterative, so a deeply nested body cannot exhaust the stack.
 */
export function assertStorableText(value: unknown, location: string): void {
  const pending: Array<[unknown, string]> = [[value, '']];
  while (pending.length > 0) {
    const [item, path] = pending.pop()!;
    if (typeof item === 'string') {
      const reason = unstorable(item);
      if (reason) throw new DomainError('invalid_request', `${path || location} ${reason}`, path || location);
    } else if (item !== null && typeof item === 'object') {
      for (const [key, inner] of Object.entries(item)) {
        const innerPath = path ? `${path}.${key}` : key;
        const keyReason = unstorable(key);
        if (keyReason) throw new DomainError('invalid_request', `a field name in ${path || location} ${keyReason}`, path || location);
        pending.push([inner, innerPath]);
      }
    }
  }
}
