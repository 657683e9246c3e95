// Newest-first pages of a table for every list route: `limit` rows after the cursor `before` (the
// id of the last row of the previous page) or after `offset` rows, in the list envelope
// { data, has_more, next_cursor }. The bounds and the query schema are in http/pagination.ts.
import type { Knex } from 'knex';
import { DomainError } from '../domain-error';

export interface PageRequest { limit: number; before?: string; offset?: number }

/** A page starts after a cursor or after a number of items, not both. */
function assertOneStart(page: PageRequest): void {
  if (page.before !== undefined && page.offset !== undefined) throw new DomainError('invalid_request', 'give before or offset, not both', 'offset');
}

/** A cursor that names nothing in the list is a client error, not an empty page. */
function unknownCursor(): DomainError {
  return new DomainError('invalid_request', 'before names no item of this list', 'before');
}

/**
 * A list's window on created_at (`from` inclusive, `to` exclusive), its currency, and the metadata
 * its items must hold (each pair, exactly), each absent when not asked (http/pagination.ts listFilterOf).
 */
export interface CreatedFilter { from?: Date; to?: Date; currency?: string; metadata?: Record<string, string> }

/**
 * Narrows `query` to the rows of `filter`: `table`.created_at within the window, `table`.currency
 * the one asked. Each list has an index on its owner and created_at (transfers, payments and holds:
 * account_id; postings: ledger_account_id), so a window is a range of it, not the owner's history.
 */
export function whereCreated(query: Knex.QueryBuilder, table: string, filter: CreatedFilter): Knex.QueryBuilder {
  if (filter.from) query.where(`${table}.created_at`, '>=', filter.from);
  if (filter.to) query.where(`${table}.created_at`, '<', filter.to);
  if (filter.currency) query.where(`${table}.currency`, filter.currency);
  return query;
}

/**
 * Narrows `query` to the rows whose jsonb `column` holds every pair of `metadata` (containment,
 * @>), answered from the column's GIN index (migrations/20261205100000_metadata.ts), whose
 * predicate the first condition repeats: the index holds only rows with metadata, and a filter
 * of at least one pair never keeps a row without.
 */
export function whereMetadata(query: Knex.QueryBuilder, column: string, metadata: Record<string, string> | undefined): Knex.QueryBuilder {
  if (metadata === undefined) return query;
  return query.whereRaw(`${column} <> '{}'::jsonb AND ${column} @> ?::jsonb`, [JSON.stringify(metadata)]);
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface KeysetOptions {
  /** Columns that order the list and identify a row; default created_at, id. */
  orderColumns?: readonly string[];
  /** Newest first (desc, the default) or oldest first. */
  order?: 'desc' | 'asc';
  /**
   * The list before its filters (the caller's scope alone), where the cursor row is looked up: a
   * row that changed since its page and left the filter (a hold captured, under status=active)
   * still marks a position in the list. Default: `query` itself.
   */
  scope?: Knex.QueryBuilder;
}

/**
 * Newest-first page (or oldest-first, with `order` asc) over `query` on `table` (a table name or alias with an `id`): rows strictly
 * before the `before` row in the order of `orderColumns` (descending; they must identify a row),
 * or after the first `offset` rows, as the list envelope. The cursor row is looked up within
 * `scope` (or `query`), which holds the caller's scope, so a cursor from another account's list
 * finds nothing; only an empty page costs a second query, to tell that apart from the end of the
 * list. Fetches one row more than asked to learn whether more exist.
 */
export async function keysetPage<Row extends { id: string }, Item>(
  query: Knex.QueryBuilder, table: string, page: PageRequest, view: (row: Row) => Item, options: KeysetOptions = {},
): Promise<Page<Item>> {
  assertOneStart(page);
  const { orderColumns = ['created_at', 'id'], order = 'desc', scope = query } = options;
  const keys = orderColumns.map((column) => `${table}.${column}`);
  const cursorRow = page.before ? scope.clone().where(`${table}.id`, page.before) : null;
  // The cursor names the last row of the previous page: the page goes on past it, in the list's order.
  if (cursorRow) query.whereRaw(`(${keys.join(', ')}) ${order === 'desc' ? '<' : '>'} ?`, [cursorRow.clone().clearSelect().select(keys)]);
  if (page.offset) query.offset(page.offset);
  const rows: Row[] = await query.orderBy(keys.map((column) => ({ column, order }))).limit(page.limit + 1);
  if (cursorRow && rows.length === 0 && !(await cursorRow.clearSelect().first(`${table}.id`))) throw unknownCursor();
  const has_more = rows.length > page.limit;
  const kept = has_more ? rows.slice(0, page.limit) : rows;
  return { data: kept.map(view), has_more, next_cursor: has_more ? kept[kept.length - 1].id : null };
}
