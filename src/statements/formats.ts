// Finance data as text: the CSV rows every export writes (statements, the journal, reports) and
// the calendar dates reconciliations take.

// A spreadsheet reads a cell starting with =, +, -, @, a tab or a carriage return as a formula
// (reconciliation fields come from partners and uploads); a plain negative amount stays a number.
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-\d+(\.\d+)?$/;

/** A CSV field: quoted when it holds a comma, quote or line break; a formula-starting text is prefixed so spreadsheets show it as text. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = value instanceof Date ? value.toISOString() : String(value);
  if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line of `row`, its fields in the order of `columns`. */
export function csvRow<C extends string>(columns: readonly C[], row: Partial<Record<C, unknown>>): string {
  return `${columns.map((column) => csvField(row[column])).join(',')}\n`;
}

/** Whether `text` is a real calendar date written YYYY-MM-DD (2026-02-30 is not). */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}
