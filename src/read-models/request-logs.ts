// Request logs as the request-log writer stored them (consumers/request-logs).
import type { Db } from '../db';
import { keysetPage, type Page, type PageRequest } from '../db/pagination';

export interface LogRow {
  id: string; account_id: string | null; credential_id: string | null; method: string; path: string; query: string;
  status: number; duration_us: number; idempotency_key: string | null; request_body: unknown; response_body: unknown;
  error_code: string | null; created_at: Date; truncated: boolean;
}

export class RequestLogReads {
  constructor(private readonly db: Db) {}

  async byId(id: string): Promise<LogRow | undefined> {
    return this.db('request_logs').where('id', id).first();
  }

  /** Newest first; every account's logs when `accountId` is null (the master key). */
  page<Item>(accountId: string | null, page: PageRequest, view: (row: LogRow) => Item): Promise<Page<Item>> {
    const query = this.db('request_logs').select('*');
    if (accountId !== null) query.where('account_id', accountId);
    return keysetPage(query, 'request_logs', page, view);
  }
}
