// `payctl logs tail`: follows the account's request logs as they are written (usually within a
// second of the request), oldest first, each once, filtered by status and path as the list route
// filters them.
import { request, type Connection } from './api';

export interface LogLine { id: string; method: string; path: string; status: number; duration_ms: string; error_code: string | null; created_at: string }

const POLL_MS = 1_000;
const PAGE = 200;

export async function tailLogs(connection: Connection, filter: { status?: string; path?: string }, print: (log: LogLine) => void, signal: AbortSignal): Promise<void> {
  const since = new Date().toISOString();
  const seen = new Set<string>();
  while (!signal.aborted) {
    const query = new URLSearchParams({ limit: String(PAGE), since });
    if (filter.status) query.set('status', filter.status);
    if (filter.path) query.set('path_prefix', filter.path);
    const page = (await request(connection, 'GET', `/v1/request-logs?${query}`)).body as { data: LogLine[] };
    // The list is newest first: printed oldest first, each log once.
    for (const log of [...page.data].reverse()) {
      if (seen.has(log.id)) continue;
      seen.add(log.id);
      print(log);
    }
    await new Promise((resolve) => { const timer = setTimeout(resolve, POLL_MS); signal.addEventListener('abort', () => { clearTimeout(timer); resolve(undefined); }, { once: true }); });
  }
}
