// List envelope and pagination shared by every list route (DESIGN.md section 5; SPEC.md: `limit`
// plus `offset`, or the cursor `before`): { data, has_more, next_cursor }, newest first, `limit`
// 1..200 (default 50), `before` = id of the last row of the previous page, or `offset` rows to
// skip (at most OFFSET_MAX: deeper pages are the cursor's job).
import type { Knex } from 'knex';
import { DomainError } from '../errors';
import type { JsonSchema } from './route';

export const LIMIT_DEFAULT = 50;
export const LIMIT_MAX = 200;
export const OFFSET_MAX = 10_000;

const limitSchema: JsonSchema = { type: 'integer', minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: `page size, 1..${LIMIT_MAX}` };
const beforeSchema: JsonSchema = { type: 'string', format: 'uuid', description: 'cursor: the id of the last item of the previous page' };
const offsetSchema: JsonSchema = { type: 'integer', minimum: 0, maximum: OFFSET_MAX, description: `items to skip, 0..${OFFSET_MAX}; instead of before` };

/** The query parameters every list takes. */
export const pageQueryProperties = { limit: limitSchema, before: beforeSchema, offset: offsetSchema };

export function listQuerySchema(extra: Record<string, JsonSchema> = {}): JsonSchema {
  return { type: 'object', additionalProperties: false, properties: { ...pageQueryProperties, ...extra } };
}

export interface PageRequest { limit: number; before?: string; offset?: number }

/** A page starts after a cursor or after a number of items, not both. */
export function assertOneStart(page: PageRequest): void {
  if (page.before !== undefined && page.offset !== undefined) throw new DomainError('invalid_request', 'give before or offset, not both', 'offset');
}

/** A cursor that names nothing in the list is a client error, not an empty page. */
export function unknownCursor(): DomainError {
  return new DomainError('invalid_request', 'before names no item of this list', 'before');
}

export function listResponseSchema(item: JsonSchema): JsonSchema {
  return {
    type: 'object', required: ['data', 'has_more', 'next_cursor'],
    properties: { data: { type: 'array', items: item }, has_more: { type: 'boolean' }, next_cursor: { type: ['string', 'null'] } },
  };
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * Newest-first page over `query` on `table` (which must have `id` and `created_at`): rows strictly
 * older than the `before` row, or after the first `offset` rows, as the list envelope. `query`
 * holds the caller's scope, so a cursor from another account's list is unknown here. Fetches one
 * row more than asked to learn whether more exist.
 */
export async function keysetPage<Row extends { id: string }, Item>(
  query: Knex.QueryBuilder, table: string, page: PageRequest, view: (row: Row) => Item,
): Promise<Page<Item>> {
  assertOneStart(page);
  if (page.offset) query.offset(page.offset);
  if (page.before) {
    if (!(await query.clone().where(`${table}.id`, page.before).first(`${table}.id`))) throw unknownCursor();
    query.whereRaw(`(${table}.created_at, ${table}.id) < (SELECT created_at, id FROM ${table} WHERE id = ?)`, [page.before]);
  }
  const rows: Row[] = await query.orderBy([{ column: `${table}.created_at`, order: 'desc' }, { column: `${table}.id`, order: 'desc' }]).limit(page.limit + 1);
  const has_more = rows.length > page.limit;
  const kept = has_more ? rows.slice(0, page.limit) : rows;
  return { data: kept.map(view), has_more, next_cursor: has_more ? kept[kept.length - 1].id : null };
}
