// Holds the document and the code together: every response a test receives is checked against
// what GET /v1/openapi.json declares for its operation and status, strictly (no undeclared
// status, no undeclared field). A violation fails the test that made the call.
import Ajv, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Responses = Record<string, { content?: Record<string, { schema?: unknown }> }>;
interface Operation { pattern: RegExp; method: string; responses: Responses }
interface Document { paths: Record<string, Record<string, { responses: Responses }>>; components: { schemas: { Error: unknown } } }

const documents = new Map<string, ReturnType<typeof load>>();
const validators = new Map<string, ValidateFunction>();
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

/**
 * The schema with every object that names its properties closed (`additionalProperties: false`
 * unless it says otherwise): the document must declare each field a response carries.
 */
function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, strict(s)])) : strict(v)]));
  if (copy.properties && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

/** The operations of the service at `baseUrl`; null for another server (a mock rail). */
async function load(baseUrl: string): Promise<{ operations: Operation[]; errorSchema: unknown } | null> {
  const response = await fetch(`${baseUrl}/v1/openapi.json`);
  if (!response.ok || !response.headers.get('content-type')?.includes('json')) return null;
  const document = await response.json() as Document;
  // The error body is registered once under a short id that the responses' $ref points to.
  if (!ajv.getSchema('error')) ajv.addSchema(strict(document.components.schemas.Error) as object, 'error');
  const resolve = (responses: Responses): Responses => JSON.parse(JSON.stringify(responses).replaceAll('"$ref":"#/components/schemas/Error"', '"$ref":"error"'));
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`);
    for (const [method, operation] of Object.entries(methods)) operations.push({ pattern, method: method.toUpperCase(), responses: resolve(operation.responses) });
  }
  return { operations, errorSchema: { $ref: 'error' } };
}

/** One compiled validator per schema text: every service a test starts serves its own copy of the document. */
function validator(schema: unknown): ValidateFunction {
  const text = JSON.stringify(schema);
  let validate = validators.get(text);
  if (!validate) {
    validate = ajv.compile(strict(schema) as object);
    validators.set(text, validate);
  }
  return validate;
}

/** Throws when a webhook body is not the document's WebhookEvent, strictly (no undeclared field). */
export async function checkWebhookEvent(baseUrl: string, event: unknown): Promise<void> {
  const document = await (await fetch(`${baseUrl}/v1/openapi.json`)).json() as { components: { schemas: { WebhookEvent: unknown } } };
  const validate = validator(document.components.schemas.WebhookEvent);
  if (!validate(event)) throw new Error(`a webhook body the document does not declare: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(event).slice(0, 300)}`);
}

/** Throws when the response is not one the document declares for this request. */
export async function checkResponse(baseUrl: string, method: string, pathAndQuery: string, status: number, contentType: string | null, body: unknown): Promise<void> {
  let document = documents.get(baseUrl);
  if (!document) {
    document = load(baseUrl);
    documents.set(baseUrl, document);
  }
  const loaded = await document;
  if (!loaded) return;
  const { operations, errorSchema } = loaded;
  const path = pathAndQuery.split('?')[0];
  const operation = operations.find((o) => o.method === method && o.pattern.test(path));
  const where = `${method} ${path} → ${status}`;
  let schema: unknown = errorSchema;
  if (operation) {
    const declared = operation.responses[String(status)];
    if (!declared) throw new Error(`the document declares no ${status} for ${method} ${path} (declared: ${Object.keys(operation.responses).join(', ')})`);
    const media = contentType?.split(';')[0].trim() ?? '';
    if (!declared.content) {
      if (body !== null && body !== '') throw new Error(`${where}: the document declares no body, got ${JSON.stringify(body).slice(0, 200)}`);
      return;
    }
    const content = declared.content[media];
    if (!content) throw new Error(`${where}: the document declares no ${media || 'untyped'} body (declared: ${Object.keys(declared.content).join(', ')})`);
    if (media !== 'application/json') return;
    schema = content.schema;
  } else if (status < 400) {
    throw new Error(`${where}: the document has no such operation`);
  }
  const validate = validator(schema);
  if (!validate(body)) {
    throw new Error(`${where}: the body does not match the declared schema: ${ajv.errorsText(validate.errors)}; body ${JSON.stringify(body).slice(0, 300)}`);
  }
}
