// The query and response schemas of every list route (DESIGN.md section 5; SPEC.md: `limit` plus
// `offset`, or the cursor `before`): newest first, `limit` 1..200 (default 50), `before` = id of
// the last row of the previous page, or `offset` rows to skip (at most OFFSET_MAX: deeper pages
// are the cursor's job). The paging itself is src/db/keyset-pages.ts.
import type { JsonSchema } from './route';

export const LIMIT_DEFAULT = 50;
export const LIMIT_MAX = 200;
export const OFFSET_MAX = 10_000;

const limitSchema: JsonSchema = { type: 'integer', minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: `page size, 1..${LIMIT_MAX}` };
const beforeSchema: JsonSchema = { type: 'string', format: 'uuid', description: 'cursor: the id of the last item of the previous page' };
const offsetSchema: JsonSchema = { type: 'integer', minimum: 0, maximum: OFFSET_MAX, description: `items to skip, 0..${OFFSET_MAX}; instead of before` };

/** The query parameters every list takes, and the route's own `extra`. */
export function listQuerySchema(extra: Record<string, JsonSchema> = {}): JsonSchema {
  return { type: 'object', additionalProperties: false, properties: { limit: limitSchema, before: beforeSchema, offset: offsetSchema, ...extra } };
}

export function listResponseSchema(item: JsonSchema): JsonSchema {
  return {
    type: 'object', required: ['data', 'has_more', 'next_cursor'],
    properties: { data: { type: 'array', items: item }, has_more: { type: 'boolean' }, next_cursor: { type: ['string', 'null'] } },
  };
}

