// What a request log is, and what the API thread (recorder.ts) and the shipper thread
// (shipper.ts) say to each other. Apart from both, so neither imports the other: the shipper is
// a worker's entry file.
export interface RequestLogRecord {
  id: string;
  account_id: string | null;
  credential_id: string | null;
  method: string;
  path: string;
  query: string;
  status: number;
  duration_us: number;
  idempotency_key: string | null;
  request_body: string | null;
  response_body: string | null;
  error_code: string | null;
  created_at: string;
  /** A body was cut or had characters Postgres cannot store replaced (body-text.ts). */
  truncated: boolean;
}

export const SHIPPER_ROLE = 'request-logs';

export type ToShipper =
  | { kind: 'batch'; id: number; records: RequestLogRecord[] }
  | { kind: 'flush'; id: number }
  | { kind: 'close' };

export type FromShipper =
  | { kind: 'flushed'; id: number }
  | { kind: 'sent'; id: number }
  | { kind: 'lost'; id: number; reason: string };
