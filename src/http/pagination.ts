// The query and response schemas of every list route (DESIGN.md section 5; SPEC.md: `limit` plus
// `offset`, or the cursor `before`): newest first, `limit` 1..200 (default 50), `before` = id of
// the last row of the previous page, or `offset` rows to skip (at most OFFSET_MAX: deeper pages
// are the cursor's job). The paging itself is src/db/keyset-pages.ts. The filters every list of
// an account's things takes (DESIGN.md section 5h, "Finding things"): `from`/`to` on created_at
// with the one meaning of dates.ts, `currency`, and `metadata[<key>]=<value>` (exact, each pair
// given); they combine with a route's own filters and page with the same cursor.
import { metadataFilterSchema } from '../../ledger/metadata';
import { CURRENCIES } from '../../ledger/money';
import type { CreatedFilter } from '../db/keyset-pages';
import { windowBound, windowOf } from './dates';
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

/** `from`, `to`, `currency` and `metadata` of a list of `things`, whose created_at the window bounds. */
export function listFilterSchemas(things: string, metadataOf = things): Record<string, JsonSchema> {
  return {
    from: windowBound('from', `${things} created at or after`), to: windowBound('to', `${things} created before`),
    currency: { type: 'string', enum: [...CURRENCIES], description: `${things} in this currency` },
    metadata: { ...metadataFilterSchema, description: `metadata[<key>]=<value>: ${metadataOf} whose metadata has each key given with exactly that value; several combine (all must hold)` },
  };
}

/**
 * The filters of a query that listFilterSchemas validated.
 * @throws DomainError invalid_request naming from (from not before to) or a date that is no calendar date
 */
export function listFilterOf(query: { from?: string; to?: string; currency?: string; metadata?: Record<string, string> }): CreatedFilter {
  const metadata = query.metadata && Object.keys(query.metadata).length > 0 ? { ...query.metadata } : undefined;
  return { ...windowOf(query), currency: query.currency, metadata };
}
