// The request-log writer: request.logs → Postgres, a batch per statement. Redelivered logs are
// dropped by their id, so the writer is idempotent.
import type { Db } from '../../src/db';
import type { Delivered } from '../../src/kafka/consumer';
import { isTransient } from '../../src/transient';
import { log } from '../../src/log';
import { copyInto } from '../../ledger/pg/copy';
import { storableString } from '../../src/request-logs/body-text';
import type { RequestLogRecord } from '../../src/request-logs/messages';

const COLUMNS = ['id', 'account_id', 'credential_id', 'method', 'path', 'query', 'status', 'duration_us', 'idempotency_key',
  'request_body', 'response_body', 'error_code', 'created_at', 'truncated'] as const;
const COLUMN_LIST = COLUMNS.join(', ');
const UNIQUE_VIOLATION = '23505';

/** One row as JSON; the bodies are JSON text already and go in as they are, not as strings. */
function rowJson({ request_body: requestBody, response_body: responseBody, ...plain }: RequestLogRecord): string {
  return `${JSON.stringify(plain).slice(0, -1)},"request_body":${requestBody ?? 'null'},"response_body":${responseBody ?? 'null'}}`;
}

/** Inserts the logs not stored yet: the path for a batch that was delivered before. */
async function insertMissing(db: Db, logs: RequestLogRecord[]): Promise<void> {
  await db.raw(
    `INSERT INTO request_logs (${COLUMN_LIST}) SELECT ${COLUMN_LIST} FROM jsonb_populate_recordset(NULL::request_logs, ?::jsonb) ON CONFLICT (id) DO NOTHING`,
    [`[${logs.map(rowJson).join(',')}]`],
  );
}

/** A log Postgres refused even alone: kept with its bodies replaced by the reason (never lost). */
function reduced(record: RequestLogRecord, reason: string): RequestLogRecord {
  const note = JSON.stringify(storableString(`body not storable: ${reason}`));
  return { ...record, request_body: record.request_body === null ? null : note, response_body: record.response_body === null ? null : note, truncated: true };
}

/**
 * Writes `logs`; on a data error (a record Postgres refuses) splits the batch in halves, so one
 * bad record costs about log2(n) statements and never takes the others with it. Transient
 * failures (Postgres down) are thrown for the consumer to retry.
 */
async function writeIsolating(db: Db, logs: RequestLogRecord[]): Promise<void> {
  try {
    await writeBatch(db, logs);
  } catch (error) {
    if (isTransient(error)) throw error;
    if (logs.length === 1) {
      const reason = (error as Error).message;
      log.warn({ requestId: logs[0].id, reason }, 'request log refused by Postgres: stored without its bodies');
      await insertMissing(db, [reduced(logs[0], reason)]);
      return;
    }
    const half = Math.ceil(logs.length / 2);
    await writeIsolating(db, logs.slice(0, half));
    await writeIsolating(db, logs.slice(half));
  }
}

// Every request is logged, so this is the busiest insert of a read-heavy load. COPY costs
// Postgres about a third of the CPU of the JSON insert (13 against 36 µs a row here), but it
// has no ON CONFLICT: a batch that was delivered before (after a crash or a rebalance) fails
// on its ids as a whole and is inserted again by the slower statement, which skips them.
async function writeBatch(db: Db, logs: RequestLogRecord[]): Promise<void> {
  try {
    await db.transaction((trx) => copyInto(trx, 'request_logs', COLUMNS, logs));
  } catch (error) {
    if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
    await insertMissing(db, logs);
  }
}

export async function writeRequestLogs(db: Db, messages: Delivered<RequestLogRecord>[]): Promise<void> {
  if (messages.length === 0) return;
  await writeIsolating(db, messages.map(({ value }) => value));
}
