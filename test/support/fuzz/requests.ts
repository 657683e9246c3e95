// Requests for the fuzzer, built from one operation of /v1/openapi.json: its path, query and
// body schemas and its security say what a valid request is; each case bends one thing.
import { randomUUID } from 'node:crypto';
import { deeplyNested, HOSTILE_NUMBERS, HOSTILE_STRINGS, pick, validValue, wrongType, type Random, type Schema } from './values';

export interface Operation {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: string; required?: boolean; schema: Schema }>;
  body: Schema | null;
  /** Security scheme names the operation accepts; empty for a public route. */
  security: string[];
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** What this case bends, for the report and a failure's message. */
  variant: string;
}

/** The credential kinds the fuzzer holds; `right` is filled per operation. */
export interface Credentials { [kind: string]: string | null }

/**
 * Values that name real resources, so valid requests reach past "not found": keyed by a body
 * field's name (`quote_id`) or by a path parameter as `<path template>#<name>`.
 */
export type KnownValues = Record<string, string[]>;

const KNOWN_SHARE = 0.7;

export function operationsOf(document: any): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries<any>(document.paths)) {
    for (const [method, operation] of Object.entries<any>(methods)) {
      operations.push({
        method: method.toUpperCase(), path, parameters: operation.parameters ?? [],
        body: operation.requestBody?.content?.['application/json']?.schema ?? null,
        security: (operation.security ?? []).flatMap((s: object) => Object.keys(s)),
      });
    }
  }
  return operations;
}

const VARIANTS = ['valid', 'valid', 'valid', 'missing-field', 'wrong-type', 'hostile-string', 'hostile-number', 'unknown-field', 'huge-body',
  'deep-body', 'malformed-json', 'wrong-content-type', 'bad-path', 'bad-query', 'no-idempotency-key', 'bad-idempotency-key'] as const;

function fillPath(operation: Operation, random: Random, bend: boolean, known: KnownValues): string {
  return operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const parameter = operation.parameters.find((p) => p.in === 'path' && p.name === name);
    const real = known[`${operation.path}#${name}`];
    const value = bend ? pick(random, ['not-a-uuid', '%00', '..%2F..', '0', 'x'.repeat(300), '%F0%9F%92%B8'])
      : real && random() < KNOWN_SHARE ? pick(random, real) : String(validValue(parameter?.schema ?? { type: 'string' }, random));
    return bend ? value : encodeURIComponent(value);
  });
}

function query(operation: Operation, random: Random, bend: boolean): string {
  const parts: string[] = [];
  for (const parameter of operation.parameters.filter((p) => p.in === 'query')) {
    if (parameter.name === 'account_id') continue; // master key only; another account's id is a 403 by design
    if (!parameter.required && random() < 0.6) continue;
    const value = bend ? pick(random, ['-1', '1e9', 'abc', '%00', '', '9'.repeat(40), 'true']) : String(validValue(parameter.schema, random));
    parts.push(`${encodeURIComponent(parameter.name)}=${bend ? value : encodeURIComponent(value)}`);
  }
  if (bend && parts.length === 0) parts.push(`unexpected=${pick(random, ['1', '%00'])}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** A body field path to bend: a random property of the (possibly nested) body schema. */
function somePath(schema: Schema, random: Random): string[] {
  const names = Object.keys(schema.properties ?? {});
  if (names.length === 0) return [];
  const name = pick(random, names);
  const inner = schema.properties[name];
  return inner.type === 'object' && inner.properties && random() < 0.5 ? [name, ...somePath(inner, random)] : [name];
}

function setAt(target: Record<string, any>, path: string[], value: unknown): void {
  let node = target;
  // A generated value may have taken another form of the field (a number where a schema allows
  // one): the bent field's parents become objects again.
  for (const key of path.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== 'object') node[key] = {};
    node = node[key];
  }
  if (path.length > 0) node[path[path.length - 1]] = value;
}

function bodyFor(operation: Operation, variant: string, random: Random, known: KnownValues): string | undefined {
  if (operation.method === 'GET') return undefined;
  if (!operation.body) return variant === 'huge-body' ? JSON.stringify({ junk: 'x'.repeat(70_000) }) : undefined;
  const body = validValue(operation.body, random) as Record<string, any>;
  for (const field of Object.keys(body)) if (known[field] && random() < KNOWN_SHARE) body[field] = pick(random, known[field]);
  const path = somePath(operation.body, random);
  switch (variant) {
    case 'missing-field': {
      const required: string[] = operation.body.required ?? [];
      if (required.length > 0) delete body[pick(random, required)];
      break;
    }
    case 'wrong-type': setAt(body, path, wrongType(path.reduce((s, k) => s.properties[k], operation.body), random)); break;
    case 'hostile-string': setAt(body, path.length > 0 ? path : ['field'], pick(random, HOSTILE_STRINGS)); break;
    case 'hostile-number': setAt(body, path.length > 0 ? path : ['field'], pick(random, HOSTILE_NUMBERS)); break;
    case 'unknown-field': body[pick(random, ['__proto__x', 'extra', 'constructor', '\u0000key'])] = 'surprise'; break;
    case 'huge-body': body.junk = 'x'.repeat(70_000); break;
    case 'deep-body': return deeplyNested(10_000);
    case 'malformed-json': return pick(random, ['{', '{"a":}', "{'single':1}", 'null', '[]', '"text"', '\u0000']);
    default: break;
  }
  return JSON.stringify(body);
}

export function fuzzRequest(operation: Operation, random: Random, credentials: Credentials, known: KnownValues = {}): FuzzRequest {
  const variant = pick(random, VARIANTS);
  const write = operation.method !== 'GET';
  const headers: Record<string, string> = {};
  const credential = random() < 0.6 ? credentials.right : credentials[pick(random, Object.keys(credentials))];
  if (credential) headers.authorization = `Bearer ${credential}`;
  const body = bodyFor(operation, variant, random, known);
  if (body !== undefined) headers['content-type'] = variant === 'wrong-content-type' ? pick(random, ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) : 'application/json';
  if (write && variant !== 'no-idempotency-key') headers['idempotency-key'] = variant === 'bad-idempotency-key' ? pick(random, ['has space', 'x'.repeat(300), 'é']) : randomUUID();
  return { method: operation.method, path: fillPath(operation, random, variant === 'bad-path', known) + query(operation, random, variant === 'bad-query'), headers, body, variant };
}
