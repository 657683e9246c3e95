// How payctl prints: a table for people (a list's items, or an object's fields), JSON for
// scripts (--json); answers on stdout, what it says about them on stderr.

/** An answer, or what a command is for: stdout. */
export const out = (text: string): void => { process.stdout.write(`${text}\n`); };
/** What payctl says about it (a key it made up, where it saved a login): stderr, out of a script's pipe. */
export const note = (text: string): void => { process.stderr.write(`${text}\n`); };

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Rows as a table: the columns are the scalar fields of the rows, in their first row's order. */
export function table(rows: Array<Record<string, unknown>>, columns?: string[]): string {
  if (rows.length === 0) return '(none)';
  const names = columns ?? Object.keys(rows[0]).filter((k) => rows.some((r) => r[k] === null || typeof r[k] !== 'object'));
  const widths = names.map((name) => Math.min(60, Math.max(name.length, ...rows.map((r) => cell(r[name]).length))));
  const line = (values: string[]) => values.map((v, i) => (v.length > widths[i] ? `${v.slice(0, widths[i] - 1)}…` : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(names.map((n) => n.toUpperCase())), ...rows.map((r) => line(names.map((n) => cell(r[n]))))].join('\n');
}

/** An answer body for people: a list as a table, an object as name/value lines. */
export function human(body: unknown): string {
  if (body === null || typeof body !== 'object') return String(body ?? '');
  const record = body as Record<string, unknown>;
  if (Array.isArray(record.data)) {
    const more = record.has_more ? `\n(more: add before=${String(record.next_cursor)} to the query)` : '';
    return table(record.data as Array<Record<string, unknown>>) + more;
  }
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record).map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n');
}
