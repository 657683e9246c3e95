// A CSV file of transfers (a header row naming recipient_email, amount, currency and, if wanted,
// note; then one transfer a line) read into POST /v1/transfer-batches's items. What is wrong is
// named by its line in the file, before anything is sent; what only the API can judge (who the
// recipient is, whether the currency is one it moves) is left to it, item by item.
export interface TransferRow { recipient_email: string; amount: string; currency: string; note?: string }

/** The items a batch takes at most (BATCH_ITEMS_MAX of ledger/messages.ts). */
export const BATCH_ROWS_MAX = 1000;
const REQUIRED = ['recipient_email', 'amount', 'currency'] as const;
/** A positive decimal amount as the API takes it: digits, and decimals after a point. */
const AMOUNT = /^\d+(\.\d+)?$/;

/** The transfers, and the line of the file each came from (`lines[i]` for `rows[i]`); or why the file is refused. */
export type TransferCsv = { rows: TransferRow[]; lines: number[] } | { error: string };

/** The file's records with the line each starts on; a quoted field may hold commas, quotes ("") and line breaks. */
function records(text: string): Array<{ line: number; fields: string[] }> {
  const found: Array<{ line: number; fields: string[] }> = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  const endRecord = () => {
    fields.push(field);
    if (fields.length > 1 || fields[0].trim() !== '') found.push({ line: start, fields });
    fields = [];
    field = '';
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 1; } else if (c === '"') quoted = false; else { if (c === '\n') line += 1; field += c; }
    } else if (c === '"') quoted = true;
    else if (c === ',') { fields.push(field); field = ''; }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i += 1;
      endRecord();
      line += 1;
      start = line;
    } else field += c;
  }
  endRecord();
  return found;
}

/** The transfers of `text`, or why the file is refused, naming the line. */
export function parseTransferCsv(text: string): TransferCsv {
  const [header, ...lines] = records(text.replace(/^\uFEFF/, ''));
  if (!header) return { error: 'the file is empty: line 1 must name the columns recipient_email, amount, currency and note' };
  const names = header.fields.map((name) => name.trim().toLowerCase());
  const missing = REQUIRED.filter((name) => !names.includes(name));
  if (missing.length > 0) return { error: `line ${header.line}: the header has no column ${missing.join(', ')}` };
  if (lines.length === 0) return { error: 'the file has no transfer: one a line after the header' };
  if (lines.length > BATCH_ROWS_MAX) return { error: `line ${lines[BATCH_ROWS_MAX].line}: a batch takes at most ${BATCH_ROWS_MAX} transfers` };
  const rows: TransferRow[] = [];
  const rowLines: number[] = [];
  for (const { line, fields } of lines) {
    if (fields.length !== names.length) return { error: `line ${line}: ${fields.length} values, the header names ${names.length} columns` };
    const value = (name: string) => fields[names.indexOf(name)]?.trim() ?? '';
    const empty = REQUIRED.find((name) => value(name) === '');
    if (empty) return { error: `line ${line}: no ${empty}` };
    if (!AMOUNT.test(value('amount'))) return { error: `line ${line}: amount "${value('amount')}" is not a decimal amount such as 10.00` };
    const note = names.includes('note') ? value('note') : '';
    rows.push({ recipient_email: value('recipient_email'), amount: value('amount'), currency: value('currency'), ...(note ? { note } : {}) });
    rowLines.push(line);
  }
  return { rows, lines: rowLines };
}

