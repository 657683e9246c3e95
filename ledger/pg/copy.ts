// Bulk inserts with COPY ... FROM STDIN. Postgres parses COPY's text format far faster than a
// JSON or array parameter and inserts the rows in batches: a ledger round of 2,000 transfers
// writes about 20,000 rows, and COPY took about 60 % of the time of jsonb_populate_recordset
// for them. pg-copy-streams drives the COPY protocol on a node-postgres client.
import { once } from 'node:events';
import type { Knex } from 'knex';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/** A value as COPY's text format writes it; objects (jsonb columns) as JSON. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return CONTROL.test(value) ? value.replace(CONTROLS, escapeChar) : value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value !== 'object') return String(value);
  // JSON text has no raw tab, newline or carriage return (JSON escapes them): only its
  // backslashes need doubling. Outbox payloads are most of a round's bytes.
  const json = JSON.stringify(value);
  return json.includes('\\') ? json.replaceAll('\\', '\\\\') : json;
}

// Backslash starts an escape; tab and newline separate columns and rows.
const CONTROL = /[\\\t\n\r]/;
const CONTROLS = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const escapeChar = (char: string) => ESCAPES[char];

/** The rows in COPY text format: fields in the order of `columns`. */
export function copyText<Row extends object>(columns: ReadonlyArray<keyof Row & string>, rows: readonly Row[]): string {
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < columns.length; i++) text += (i === 0 ? '' : '\t') + copyField(row[columns[i]]);
    text += '\n';
  }
  return text;
}

/**
 * Inserts `rows` into `table` with COPY on the transaction's own connection, so the rows are
 * part of the transaction. Statement triggers fire as for INSERT. Returns the rows copied.
 * `table` and `columns` go into the SQL text as they are: callers pass their own constants.
 */
export async function copyInto<Row extends object>(trx: Knex.Transaction, table: string, columns: ReadonlyArray<keyof Row & string>, rows: readonly Row[]): Promise<number> {
  if (rows.length === 0) return 0;
  // Inside a transaction knex hands out the connection the transaction runs on.
  return copyIntoClient((await trx.client.acquireConnection()) as pg.Client, table, columns, rows);
}

/** copyInto on a connection of one's own, in whatever transaction it has open. */
export async function copyIntoClient<Row extends object>(client: pg.ClientBase, table: string, columns: ReadonlyArray<keyof Row & string>, rows: readonly Row[]): Promise<number> {
  if (rows.length === 0) return 0;
  return copyTextIntoClient(client, table, columns, copyText(columns, rows));
}

/** copyInto for rows already in COPY text format (copyText), made elsewhere: in a worker thread. */
export async function copyTextInto(trx: Knex.Transaction, table: string, columns: readonly string[], text: string): Promise<number> {
  if (text === '') return 0;
  return copyTextIntoClient((await trx.client.acquireConnection()) as pg.Client, table, columns, text);
}

async function copyTextIntoClient(client: pg.ClientBase, table: string, columns: readonly string[], text: string): Promise<number> {
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  const finished = once(stream, 'finish'); // rejects on the stream's 'error': the server refused a row
  stream.end(text);
  await finished;
  return stream.rowCount;
}
