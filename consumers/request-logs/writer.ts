// The request-log writer: request.logs → Postgres, a batch per insert. Redelivered logs are
// dropped by their id, so the writer is idempotent.
import type { Db } from '../../src/db';
import type { Delivered } from '../../src/kafka/consumer';
import type { RequestLogRecord } from '../../src/request-logs/recorder';

export async function writeRequestLogs(db: Db, messages: Delivered<RequestLogRecord>[]): Promise<void> {
  const rows = messages.map(({ value }) => ({
    id: value.id,
    account_id: value.account_id,
    credential_id: value.credential_id,
    method: value.method,
    path: value.path,
    query: value.query,
    status: value.status,
    duration_us: value.duration_us,
    idempotency_key: value.idempotency_key,
    request_body: value.request_body,
    response_body: value.response_body,
    error_code: value.error_code,
    created_at: value.created_at,
  }));
  await db('request_logs').insert(rows).onConflict('id').ignore();
}
