// A partner statement an operator uploads as CSV instead of the service fetching it: a header
// row naming the columns (id, amount, currency, value_date; reference, fee, net and settles
// optional: settles lists the references a batch line settles, separated by spaces), then one
// line per row. Fields may be quoted ("..."; "" is a quote inside). Every error names
// the line and the column, and nothing is reconciled from a statement that has one.
// A line may carry no reference (bank exports often do not): it is matched only by amount and
// date, and only when nothing else fits. An uploaded line is named by its content, not by the
// file it came in nor by its `id` (two exports of one day number and order their lines as they
// please): `upload-<digest of its reference, currency, amounts at the currency's scale and value
// date>:<n>`, the n-th line of that content in the file (numbered once staged, in Postgres). A re-export of the same day (another
// line added, other line endings, other ids) names the lines it shares with the first the same,
// so a line matched before stays matched; a second line of the same content in one file is
// another line, reported as the statement has it (a duplicate of its reference).
import { createHash } from 'node:crypto';
import { CURRENCY_SCALE, isCurrency, Money } from '../../ledger/money';
import { DomainError } from '../domain-error';
import { isCalendarDate } from '../http/dates';
import type { StagedLine } from './run';

const REQUIRED = ['id', 'amount', 'currency', 'value_date'] as const;
const SIGNED_DECIMAL = /^-?\d{1,20}(?:\.\d{1,18})?$/;
export const STATEMENT_CSV_LINES_MAX = 200_000;

function invalid(message: string): DomainError {
  return new DomainError('invalid_request', `statement_csv: ${message}`, 'statement_csv');
}

/** The fields of one CSV record; `text` holds no line break outside quotes. */
function fieldsOf(record: string, lineNumber: number): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (record[i] === '"') {
      let value = '';
      i += 1;
      for (;;) {
        const quote = record.indexOf('"', i);
        if (quote < 0) throw invalid(`line ${lineNumber}: a quoted field is not closed`);
        value += record.slice(i, quote);
        if (record[quote + 1] === '"') { value += '"'; i = quote + 2; continue; }
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i < record.length && record[i] !== ',') throw invalid(`line ${lineNumber}: text after a quoted field`);
    } else {
      const comma = record.indexOf(',', i);
      fields.push(record.slice(i, comma < 0 ? record.length : comma).trim());
      i = comma < 0 ? record.length : comma;
    }
    if (i >= record.length) return fields;
    i += 1; // the comma
  }
}

/** The non-blank records of `text`, with their line numbers, read in place (no copy of the whole text). */
function* recordsOf(text: string): Generator<{ record: string; line: number }> {
  let line = 0;
  for (let start = 0; start < text.length;) {
    const end = text.indexOf('\n', start);
    const stop = end < 0 ? text.length : end;
    line += 1;
    const record = text.slice(start, stop > start && text[stop - 1] === '\r' ? stop - 1 : stop);
    if (record.trim() !== '') yield { record, line };
    start = stop + 1;
  }
}

function countRecords(text: string): number {
  let records = 0;
  for (const record of recordsOf(text)) if (record) records += 1;
  return records;
}

/**
 * Checks the header and the size, then reads the statement's lines a chunk at a time: a line
 * in error throws as it is reached, naming it, and the caller's transaction stores nothing.
 */
export function statementCsvChunks(text: string, size = 5000): AsyncGenerator<StagedLine[]> {
  const records = recordsOf(text);
  const first = records.next();
  if (first.done) throw invalid('the statement is empty: a header row is required');
  if (countRecords(text) - 1 > STATEMENT_CSV_LINES_MAX) throw invalid(`at most ${STATEMENT_CSV_LINES_MAX} lines`);
  const header = fieldsOf(first.value.record, first.value.line).map((name) => name.toLowerCase());
  const missing = REQUIRED.filter((name) => !header.includes(name));
  if (missing.length > 0) throw invalid(`the header row lacks ${missing.join(', ')} (columns: ${REQUIRED.join(', ')}, and optionally reference, fee, net, settles)`);
  const seen = new Set<string>();
  async function* chunks(): AsyncGenerator<StagedLine[]> {
    let chunk: StagedLine[] = [];
    for (const { record, line } of records) {
      chunk.push(entryOf(header, fieldsOf(record, line), line, seen));
      if (chunk.length === size) { yield chunk; chunk = []; }
    }
    if (chunk.length > 0) yield chunk;
  }
  return chunks();
}

function entryOf(header: string[], fields: string[], line: number, seen: Set<string>): StagedLine {
  if (fields.length !== header.length) throw invalid(`line ${line}: ${fields.length} fields, the header has ${header.length}`);
  const get = (name: string) => (header.indexOf(name) < 0 ? '' : fields[header.indexOf(name)]);
  const [id, reference, currency, valueDate] = [get('id'), get('reference'), get('currency'), get('value_date')];
  if (id === '' || seen.has(id)) throw invalid(`line ${line}: id must be present and unique`);
  seen.add(id);
  if (!isCurrency(currency)) throw invalid(`line ${line}: currency "${currency}" is not one of ${Object.keys(CURRENCY_SCALE).join(', ')}`);
  if (!isCalendarDate(valueDate)) throw invalid(`line ${line}: value_date must be a date, YYYY-MM-DD`);
  const decimal = (name: string, fallback: string | null) => {
    const value = get(name) === '' && fallback !== null ? fallback : get(name);
    if (!SIGNED_DECIMAL.test(value)) throw invalid(`line ${line}: ${name} must be a decimal such as "-10.00"`);
    const amount = new Money(value);
    if ((amount.decimalPlaces() ?? 0) > CURRENCY_SCALE[currency]) throw invalid(`line ${line}: ${name} has more than the ${CURRENCY_SCALE[currency]} decimals of ${currency}`);
    return amount;
  };
  const amount = decimal('amount', null);
  const fee = decimal('fee', '0');
  if (fee.isNegative()) throw invalid(`line ${line}: fee must not be negative`);
  const net = decimal('net', amount.minus(fee).toFixed());
  if (!net.isEqualTo(amount.minus(fee))) throw invalid(`line ${line}: net must equal amount − fee`);
  // A batch line's settlement detail: the references it settles, separated by spaces.
  const settles = get('settles') === '' ? null : get('settles').split(/\s+/).filter((r) => r !== '');
  // Amounts at the currency's scale, always ("123.4" is staged as "123.40"): a line's content, as
  // its match records it, is the same however the partner wrote it.
  const scale = CURRENCY_SCALE[currency];
  const staged = { reference: reference === '' ? null : reference, currency, amount: amount.toFixed(scale), fee: fee.toFixed(scale), net: net.toFixed(scale), valueDate, settles };
  // Numbered among the lines of its content once staged (run.ts: numberUploadedLines).
  return { lineId: uploadedLineContent(staged), ...staged };
}

/**
 * What names an uploaded line: a digest of its canonical fields (amounts at the currency's scale).
 * A batch line (one with settlement detail) is named without its amounts: a batch of a day still
 * going on lists more payments in a later export, for a larger amount, and is the same line, its
 * match released as its content changed (run-sql.ts: LINE_FINGERPRINT) and made afresh.
 */
export function uploadedLineContent(line: Pick<StagedLine, 'reference' | 'currency' | 'amount' | 'fee' | 'valueDate' | 'settles'>): string {
  const amounts = line.settles === null ? [line.amount, line.fee] : ['batch'];
  const fields = [line.reference ?? '', line.currency, ...amounts, line.valueDate];
  return `upload-${createHash('sha256').update(fields.join('\u001f')).digest('hex').slice(0, 16)}`;
}
