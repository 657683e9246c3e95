// The request-log writer: request.logs → Postgres, a batch per insert. Redelivered logs are
// dropped by their id, so the writer is idempotent.
import type { Db } from '../../src/db';
import type { Delivered } from '../../src/kafka/consumer';
import type { RequestLogRecord } from '../../src/request-logs/recorder';

const COLUMNS = 'id, account_id, credential_id, method, path, query, status, duration_us, idempotency_key, request_body, response_body, error_code, created_at';

/** One row as JSON; the bodies are JSON text already and go in as they are, not as strings. */
function rowJson({ request_body: requestBody, response_body: responseBody, ...plain }: RequestLogRecord): string {
  return `${JSON.stringify(plain).slice(0, -1)},"request_body":${requestBody ?? 'null'},"response_body":${responseBody ?? 'null'}}`;
}

export async function writeRequestLogs(db: Db, messages: Delivered<RequestLogRecord>[]): Promise<void> {
  if (messages.length === 0) return;
  // The whole batch is one JSON parameter: cheaper to send than 13 parameters a row.
  await db.raw(
    `INSERT INTO request_logs (${COLUMNS}) SELECT ${COLUMNS} FROM jsonb_populate_recordset(NULL::request_logs, ?::jsonb) ON CONFLICT (id) DO NOTHING`,
    [`[${messages.map(({ value }) => rowJson(value)).join(',')}]`],
  );
}
