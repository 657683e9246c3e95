// Values for the fuzzer, drawn from the JSON Schemas of /v1/openapi.json alone: valid ones that
// follow a schema (enums, formats, patterns, lengths), and hostile ones that no schema allows.
import { randomUUID } from 'node:crypto';
import { today } from '../days';

export type Schema = Record<string, any>;
export type Random = () => number;

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)];

/** Strings and numbers that have broken services: NUL, lone surrogates, huge, injection-like. */
export const HOSTILE_STRINGS = [
  '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udfff x', '\u202eevil', '👩‍👩‍👧‍👦💸', 'x'.repeat(10_000), "'; DROP TABLE accounts; --",
  '{"$gt":""}', '../../etc/passwd', '%00', '\\u0000', '<script>alert(1)</script>', '1e308', '-0', 'NaN', '0x10', '١٢٣',
];
export const HOSTILE_NUMBERS = [0, -1, 1e308, -1e308, 2 ** 63, 0.1, -0, Number.MAX_SAFE_INTEGER + 2];

/** A value the schema accepts (best effort: patterns are met through examples and known shapes). */
export function validValue(schema: Schema, random: Random, depth = 0): unknown {
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return pick(random, schema.enum.filter((v: unknown) => v !== null));
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return pick(random, schema.examples);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string': return validString(schema, random);
    case 'integer': return Math.max(schema.minimum ?? 1, Math.min(schema.maximum ?? 50, 1 + Math.floor(random() * 20)));
    case 'number': return 1 + Math.floor(random() * 20);
    case 'boolean': return random() < 0.5;
    case 'array': return depth > 4 ? [] : Array.from({ length: schema.minItems ?? (random() < 0.5 ? 1 : 0) }, () => validValue(schema.items ?? {}, random, depth + 1));
    case 'object': return validObject(schema, random, depth);
    default: return 'value';
  }
}

function validString(schema: Schema, random: Random): string {
  switch (schema.format) {
    case 'uuid': return randomUUID();
    case 'email': return `fuzz-${randomUUID()}@example.com`;
    case 'date-time': return new Date(Date.now() - Math.floor(random() * 86_400_000)).toISOString();
    default: break;
  }
  if (typeof schema.pattern === 'string' && schema.pattern.includes('[0-9]')) return pick(random, ['1.00', '12.34', '0.50', '250']);
  const length = Math.max(schema.minLength ?? 1, Math.min(schema.maxLength ?? 24, 4 + Math.floor(random() * 12)));
  return 'Fuzz ' + 'abcdefghijklmnopqrstuvwxyz'.repeat(4).slice(0, Math.max(0, length - 5));
}

function validObject(schema: Schema, random: Random, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const required = new Set<string>(schema.required ?? []);
  for (const [name, property] of Object.entries<Schema>(schema.properties ?? {})) {
    // Optional fields half of the time; never the master-key-only account_id on a regular key.
    if (!required.has(name) && (random() < 0.5 || name === 'account_id')) continue;
    out[name] = validValue(property, random, depth + 1);
  }
  return out;
}

/** A value of another JSON type than the schema wants. */
export function wrongType(schema: Schema, random: Random): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const others: unknown[] = [42, -7.5, true, null, [], {}, 'text', [1, 'two'], { nested: { deeper: true } }];
  return pick(random, others.filter((value) => jsonType(value) !== type && !(type === 'number' && typeof value === 'number')));
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** JSON text nested `depth` levels deep (JSON.stringify would overflow the stack first). */
export const deeplyNested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/**
 * The first value a schema allows, chosen the way a client generated from the document would
 * build one: the const, the first enum value, the first example, a value of the format, the
 * minimum. A string with a pattern must carry an example: the document says what it looks like.
 */
export function firstValid(schema: Schema, where = 'value'): unknown {
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.find((v: unknown) => v !== null);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  for (const alternatives of [schema.anyOf, schema.oneOf]) {
    if (Array.isArray(alternatives) && alternatives.length > 0 && !schema.properties) return firstValid({ ...schema, anyOf: undefined, oneOf: undefined, ...alternatives[0] }, where);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string': {
      switch (schema.format) {
        case 'uuid': return randomUUID();
        case 'email': return `client-${randomUUID()}@example.com`;
        case 'date-time': return new Date().toISOString();
        case 'date': return today();
        case 'uri': return 'https://example.com/';
        default: break;
      }
      if (schema.pattern !== undefined) throw new Error(`${where}: a pattern without an example (${schema.pattern})`);
      return 'a'.repeat(Math.max(1, schema.minLength ?? 1));
    }
    case 'integer':
    case 'number': return schema.default ?? schema.minimum ?? 1;
    case 'boolean': return schema.default ?? false;
    case 'array': return Array.from({ length: schema.minItems ?? 0 }, (_, i) => firstValid(schema.items ?? {}, `${where}[${i}]`));
    case 'object': {
      const required = new Set<string>(schema.required ?? []);
      const out: Record<string, unknown> = {};
      // An object that must have more fields than it requires (a PATCH of at least one): the first optional ones too.
      const properties = Object.entries<Schema>(schema.properties ?? {});
      const optional = properties.filter(([name]) => !required.has(name) && name !== 'account_id').slice(0, Math.max(0, (schema.minProperties ?? 0) - required.size));
      for (const [name, property] of [...properties.filter(([name]) => required.has(name)), ...optional]) {
        out[name] = firstValid(property, `${where}.${name}`);
      }
      return out;
    }
    default: return 'a';
  }
}
