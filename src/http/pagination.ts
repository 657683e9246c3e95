// List envelope and cursor pagination shared by every list route (DESIGN.md section 5):
// { data, has_more, next_cursor }, newest first, `limit` 1..200 (default 50), `before` = id of
// the last row of the previous page.
import type { Knex } from 'knex';
import type { JsonSchema } from './route';

export const LIMIT_DEFAULT = 50;
export const LIMIT_MAX = 200;

export const limitSchema: JsonSchema = { type: 'integer', minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: `page size, 1..${LIMIT_MAX}` };
export const beforeSchema: JsonSchema = { type: 'string', format: 'uuid', description: 'cursor: the id of the last item of the previous page' };

export function listQuerySchema(extra: Record<string, JsonSchema> = {}): JsonSchema {
  return { type: 'object', additionalProperties: false, properties: { limit: limitSchema, before: beforeSchema, ...extra } };
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
 * Newest-first keyset page over `table` (which must have `id` and `created_at`): rows strictly
 * older than the `before` row, as the list envelope. Fetches one row more than asked to learn
 * whether more exist.
 */
export async function keysetPage<Row extends { id: string }, Item>(
  query: Knex.QueryBuilder, table: string, page: { limit: number; before?: string }, view: (row: Row) => Item,
): Promise<Page<Item>> {
  if (page.before) {
    query.whereRaw(`(${table}.created_at, ${table}.id) < (SELECT created_at, id FROM ${table} WHERE id = ?)`, [page.before]);
  }
  const rows: Row[] = await query.orderBy([{ column: `${table}.created_at`, order: 'desc' }, { column: `${table}.id`, order: 'desc' }]).limit(page.limit + 1);
  const has_more = rows.length > page.limit;
  const kept = has_more ? rows.slice(0, page.limit) : rows;
  return { data: kept.map(view), has_more, next_cursor: has_more ? kept[kept.length - 1].id : null };
}
