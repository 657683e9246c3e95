// Request logs as the request-log writer stored them (consumers/request-logs).
import type { Db } from '../db';
import { keysetPage, type Page, type PageRequest } from '../db/keyset-pages';

export interface LogRow {
  id: string; account_id: string | null; credential_id: string | null; method: string; path: string; query: string;
  status: number; duration_us: number; idempotency_key: string | null; request_body: unknown; response_body: unknown;
  error_code: string | null; created_at: Date; truncated: boolean;
}

/** Which logs a list shows: a status class (`4xx`) or code (`404`), a path prefix, a first instant. */
export interface LogFilter { status?: string; pathPrefix?: string; since?: Date }

export class RequestLogReads {
  constructor(private readonly db: Db) {}

  async byId(id: string): Promise<LogRow | undefined> {
    return this.db('request_logs').where('id', id).first();
  }

  /** Newest first; every account's logs when `accountId` is null (the master key). */
  page<Item>(accountId: string | null, filter: LogFilter, page: PageRequest, view: (row: LogRow) => Item): Promise<Page<Item>> {
    const query = this.db('request_logs').select('*');
    if (accountId !== null) query.where('account_id', accountId);
    if (filter.status !== undefined) {
      const { status } = filter;
      if (/^[1-5]xx$/.test(status)) {
        const low = Number.parseInt(status[0], 10) * 100;
        query.where('status', '>=', low).andWhere('status', '<', low + 100);
      } else {
        query.where('status', Number.parseInt(status, 10));
      }
    }
    // A prefix match, with LIKE's wildcards in the prefix taken literally.
    if (filter.pathPrefix !== undefined) query.where('path', 'like', `${filter.pathPrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    if (filter.since !== undefined) query.where('created_at', '>=', filter.since);
    return keysetPage(query, 'request_logs', page, view);
  }
}
