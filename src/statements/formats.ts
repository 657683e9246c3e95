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
