// Request validation from the JSON Schemas a route declares. A failure becomes a DomainError
// whose `details` names the offending field in dotted form ("recipient.bank.country").
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { DomainError, ERROR_STATUS, type ErrorCode } from '../domain-error';
import type { JsonSchema } from './route';

/**
 * The one textual form of an id on the wire: 32 hex digits in 8-4-4-4-12 groups, in either case,
 * nothing around them (no `urn:uuid:`, no braces, no spaces). A valid id is read in lower case,
 * the form every store keeps, so `3F1E…` and `3f1e…` name the same thing (RFC 9562 section 4).
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** A UUID in lower case, as a pattern to embed: the form of the ids a schema states by pattern. */
export const LOWER_CASE_UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** Where money sits in an account: "main" (its main balance) or one of its wallets, by id. */
export const walletSideSchema = (description: string) => ({ type: 'string', pattern: `^(main|${LOWER_CASE_UUID})$`, examples: ['main'], description }) as const;

// strictRequired off: a rule across fields (if/then) names a required field declared beside it.
// allErrors: a field's own rule is reported before a rule across fields that it also breaks.
const bodyAjv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, coerceTypes: false });
// Query strings and path parameters are text on the wire; let "limit=10" satisfy an integer.
// Declared defaults apply to absent parameters (an absent `limit` is the default page size).
const textAjv = new Ajv({ allErrors: false, verbose: true, strict: true, coerceTypes: true, useDefaults: true });

/** ajv-formats' own checks of the two formats, which the service narrows to the stored years. */
type StringFormat = { validate: (text: string) => boolean; compare: (a: string, b: string) => number | undefined };
const ISO = { dateTime: fullFormats['date-time'] as StringFormat, date: fullFormats.date as StringFormat };
const FIRST_STORED = Date.parse('0001-01-01T00:00:00Z');
const LAST_STORED = Date.parse('9999-12-31T23:59:59.999Z');

/** Whether an instant (ISO 8601) falls within the years 0001 to 9999, UTC. */
function withinStoredYears(text: string): boolean {
  const at = Date.parse(text);
  return at >= FIRST_STORED && at <= LAST_STORED;
}

for (const ajv of [bodyAjv, textAjv]) {
  addFormats(ajv);
  // A schema may name the error code its failure maps to (e.g. invalid_country_code), and a rule
  // across fields the message and the field its failure reports.
  ajv.addKeyword({ keyword: 'x-error', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-field', schemaType: 'string' });
  // ajv-formats' uuid also takes `urn:uuid:<uuid>`, which no store accepts as an id.
  ajv.addFormat('uuid', new RegExp(UUID_PATTERN));
  // Dates and instants within the years 0001 to 9999 (in UTC): year 0 and beyond 9999 are valid
  // ISO 8601 but no date Postgres stores, and an offset can carry 0001-01-01T00:00+01:00 into year 0.
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => ISO.dateTime.validate(text) && withinStoredYears(text), compare: ISO.dateTime.compare });
  ajv.addFormat('date', { type: 'string', validate: (text: string) => ISO.date.validate(text) && withinStoredYears(`${text}T00:00:00Z`), compare: ISO.date.compare });
  ajv.addKeyword({
    keyword: 'x-canonical-id', schemaType: 'boolean', modifying: true, errors: false,
    validate: (_on: boolean, data: unknown, _schema: unknown, place?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number }) => {
      if (typeof data === 'string' && place?.parentData) place.parentData[place.parentDataProperty] = data.toLowerCase();
      return true;
    },
  });
}

/** The schema with every uuid field marked to be read in lower case (x-canonical-id), as a copy. */
function withCanonicalIds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withCanonicalIds);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'enum' || key === 'const' ? value : withCanonicalIds(value)]));
  if (copy.format === 'uuid') copy['x-canonical-id'] = true;
  return copy;
}

export type Validator = (data: unknown) => void;

/** What a value of a format looks like, for the message of a value that is not one. */
const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': 'ISO 8601 with a time and an offset, in the years 0001 to 9999, e.g. 2026-11-24T10:00:00Z',
  date: 'YYYY-MM-DD, in the years 0001 to 9999',
  uuid: 'a UUID as 8-4-4-4-12 hex digits, e.g. 3f1e8c2a-5b7d-4c9e-8a1f-2d4b6c8e0a13',
  email: 'e.g. name@example.com',
  uri: 'an absolute URL, e.g. https://example.com/hook',
};

/**
 * An instance path (a JSON Pointer) in the form `details` names fields: dotted, an array's item by
 * its index (transfers[3].amount), read against the data validated so that an object's key of
 * digits stays a key (metadata.17), and its keys unescaped (metadata.a/b).
 */
function dotted(instancePath: string, root: unknown): string {
  let path = '';
  let at = root;
  for (const escaped of instancePath.split('/').slice(1)) {
    const part = escaped.replaceAll('~1', '/').replaceAll('~0', '~');
    path = Array.isArray(at) ? `${path}[${part}]` : path ? `${path}.${part}` : part;
    at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined;
  }
  return path;
}

/**
 * The key of an object a rule on its keys names: the key that breaks `propertyNames` (empty ones
 * too), or the first key past `maxProperties`, in the order sent (metadata.order_id).
 */
function keyAtFault(error: ErrorObject): string | null {
  if (error.propertyName !== undefined) return error.propertyName;
  if (error.keyword === 'maxProperties' && error.data !== null && typeof error.data === 'object') {
    return Object.keys(error.data)[(error.params as { limit: number }).limit] ?? null;
  }
  return null;
}

function fieldPath(error: ErrorObject, location: string, root: unknown): string {
  const base = dotted(error.instancePath, root);
  let field = base;
  if (error.keyword === 'required') field = [base, (error.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
  if (error.keyword === 'additionalProperties') field = [base, (error.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
  const key = keyAtFault(error);
  if (key !== null) field = `${base || location}.${key}`;
  return field || location;
}

function describe(error: ErrorObject, field: string, root: unknown): string {
  const key = keyAtFault(error);
  if (key !== null) {
    const object = dotted(error.instancePath, root) || 'the object';
    return error.keyword === 'maxProperties'
      ? `${object} has at most ${(error.params as { limit: number }).limit} keys: "${key}" is one too many`
      : `the key "${key}" of ${object} ${error.message ?? 'is invalid'}`;
  }
  switch (error.keyword) {
    case 'required': return `${field} is required`;
    case 'additionalProperties': return `${field} is not a recognised field`;
    case 'type': return `${field} must be of type ${(error.params as { type: string }).type}`;
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return allowed.length <= 12 ? `${field} must be one of: ${allowed.join(', ')}` : `${field} must be a valid ${description ?? 'value'}`;
    }
    case 'format': {
      const format = (error.params as { format: string }).format;
      return `${field} must be a valid ${format}${FORMAT_EXAMPLES[format] ? ` (${FORMAT_EXAMPLES[format]})` : ''}`;
    }
    // The schema's description says which form the field takes.
    case 'pattern':
    case 'anyOf': {
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return description ? `${field} must be ${description}` : `${field} has an invalid format`;
    }
    default: return `${field} ${error.message ?? 'is invalid'}`;
  }
}

function toDomainError(error: ErrorObject, location: string, root: unknown): DomainError {
  const parent = error.parentSchema as Record<string, unknown> | undefined;
  // A rule's own field is named within the object it checks (an item of an array, for one).
  const within = dotted(error.instancePath, root);
  const field = typeof parent?.['x-field'] === 'string' ? (within ? `${within}.${parent['x-field']}` : parent['x-field']) : fieldPath(error, location, root);
  const override = parent?.['x-error'];
  const code: ErrorCode = typeof override === 'string' && override in ERROR_STATUS && error.keyword !== 'required' && error.keyword !== 'type'
    ? (override as ErrorCode)
    : 'invalid_request';
  return new DomainError(code, typeof parent?.['x-message'] === 'string' ? parent['x-message'] : describe(error, field, root), field);
}

/**
 * Compiled schemas by their text, one map per Ajv: compiling is most of the cost of building an
 * app, and a process that builds more than one (a restart of the API in place, the test suite's
 * services) compiles each schema once. Bounded by the routes' schemas.
 */
const compiled = new Map<Ajv, Map<string, ValidateFunction>>();

function compile(ajv: Ajv, schema: JsonSchema): ValidateFunction {
  let byText = compiled.get(ajv);
  if (!byText) compiled.set(ajv, (byText = new Map()));
  const text = JSON.stringify(schema);
  let validate = byText.get(text);
  if (!validate) byText.set(text, (validate = ajv.compile(withCanonicalIds(schema) as JsonSchema)));
  return validate;
}

function build(ajv: Ajv, schema: JsonSchema, location: string): Validator {
  const validate = compile(ajv, schema);
  return (data: unknown) => {
    if (validate(data)) return;
    const errors = validate.errors!;
    // A field that may take one of several forms fails as a whole, with its description; a rule
    // across fields (under if/then) speaks only when no field breaks a rule of its own.
    const acrossFields = (error: ErrorObject) => error.keyword === 'if' || error.schemaPath.includes('/then/');
    const first = errors.find((e) => !acrossFields(e)) ?? errors.find((e) => e.keyword !== 'if')!;
    const whole = first.schemaPath.includes('/anyOf/') ? errors.find((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath) : undefined;
    throw toDomainError(whole ?? first, location, data);
  };
}

export const bodyValidator = (schema: JsonSchema): Validator => build(bodyAjv, schema, 'body');

/**
 * The query as a route's schema reads it: the `name[key]=value` parameters of each parameter the
 * schema declares as an object (OpenAPI style deepObject, exploded: `metadata[order_id]=A-17`)
 * gathered into one object under `name`; the key is all between the first `[` and the last `]`,
 * so a key may hold brackets itself. A key sent twice keeps both values, which the schema refuses.
 * Other parameters are left as they are (an undeclared `x[y]` is refused as not recognised).
 */
export function gatherDeepObjects(query: Record<string, unknown>, schema: JsonSchema): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  // Without prototypes: a name or key such as "__proto__" is one like any other.
  const gathered: Record<string, unknown> = Object.create(null);
  for (const [name, value] of Object.entries(query)) {
    const bracket = name.indexOf('[');
    const object = bracket > 0 && name.endsWith(']') ? name.slice(0, bracket) : null;
    // The object sent whole as well (metadata=x) is refused as it is, not mixed with the pairs.
    if (object === null || properties[object]?.type !== 'object' || query[object] !== undefined) {
      gathered[name] = value;
      continue;
    }
    const into = (gathered[object] ??= Object.create(null)) as Record<string, unknown>;
    into[name.slice(bracket + 1, -1)] = value;
  }
  return gathered;
}
export const textValidator = (schema: JsonSchema, location: string): Validator => build(textAjv, schema, location);

export const idParams = { type: 'object', properties: { id: { type: 'string', format: 'uuid' } } };
