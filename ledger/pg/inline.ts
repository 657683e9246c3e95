// Statements sent as one message of Postgres's simple query protocol: several statements, one
// round trip. That protocol takes no parameters, so values are set into the text as literals,
// escaped by pg's own escapeLiteral. Only for the service's own statement constants, whose only
// `$n` are placeholders: a ledger round begins with its locks in one such message and ends with
// its write and COMMIT in another (ledger/store/round-transaction.ts).
import pg from 'pg';

/** A value as an SQL literal: text (escaped), a number, a boolean, NULL, or an ARRAY[...] of them. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(',')}]`;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot write ${value} as an SQL literal`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value !== 'string') throw new Error(`cannot write a ${typeof value} as an SQL literal`);
  return pg.escapeLiteral(value);
}

/** `sql` with each placeholder $n replaced by params[n - 1] as a literal. */
export function inlineSql(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const index = Number(n) - 1;
    if (index >= params.length) throw new Error(`no parameter for $${n}`);
    return literal(params[index]);
  });
}
