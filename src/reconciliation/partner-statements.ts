// The partner's side of a reconciliation: its daily statements, fetched over its OAuth-protected
// API with the client's own credentials. (The ledger's side, the movements on the partner's
// settlement accounts sys:partner:<partner>:<currency>, is read where it lies: run.ts.)
import { DomainError } from '../domain-error';
import { CURRENCY_SCALE, isCurrency, Money } from '../../ledger/money';
import type { PartnerClient, PartnerStatementLine } from '../partners/client';
import { isPartnerError } from '../partners/errors';
import type { StagedLine } from './run';

const DAY_MS = 86_400_000;
/** How many days before and after the range the ledger is searched for a line's movement by its reference, so a line days early or late still meets it. */
export const LOOKAROUND_DAYS = 7;

export const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** Every day from `from` to `to`, inclusive. */
export function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

const DECIMAL = /^-?\d{1,30}(?:\.(\d{1,30}))?$/;

/** `text` at `scale` places, canonical ("123.4" → "123.40"); null when it is no decimal or has more places than `scale`. */
function atScale(text: string, scale: number): string | null {
  const decimal = DECIMAL.exec(text);
  if (!decimal || (decimal[1]?.length ?? 0) > scale) return null;
  return new Money(text).toFixed(scale);
}

function entryOf(line: PartnerStatementLine): StagedLine | null {
  if (!isCurrency(line.currency)) return null;
  const scale = CURRENCY_SCALE[line.currency];
  const [amount, fee, net] = [atScale(line.amount, scale), atScale(line.fee, scale), atScale(line.net, scale)];
  if (amount === null || fee === null || net === null) {
    // Never rounded: a cent the partner claims and the ledger cannot hold is for a person to see.
    throw new DomainError('partner_error', `the partner's statement line ${line.id} has an amount that is no decimal of at most the ${scale} decimals of ${line.currency}; nothing was reconciled`, 'partner');
  }
  return {
    lineId: line.id, reference: line.reference, currency: line.currency, amount, fee, net, valueDate: line.value_date,
    settles: Array.isArray(line.settles) ? line.settles.filter((r): r is string => typeof r === 'string') : null,
  };
}

/** Lines asked of a partner at once. */
const STATEMENT_PAGE_LINES = 10_000;
/** Days whose statements are read at once, and pages read ahead of the reader in each. */
const DAYS_AT_ONCE = 3;
const PAGES_AHEAD = 2;

/**
 * The partner's statements of every day from `from` to `to`, in day order, a page of lines at a
 * time. The next days' statements are read while this one is (the partner answers each page after
 * a query of its own, so one page at a time spent most of a run waiting): at most DAYS_AT_ONCE ×
 * PAGES_AHEAD pages are held, however busy a day or long the range.
 */
export async function* statementDays(client: PartnerClient, partner: string, from: string, to: string): AsyncGenerator<StagedLine[]> {
  const days = daysOf(from, to);
  const readers = new Map<number, AsyncIterator<StagedLine[]>>();
  const open = (i: number) => { if (i < days.length && !readers.has(i)) readers.set(i, readAhead(dayPages(client, partner, days[i]), PAGES_AHEAD)); };
  try {
    for (let i = 0; i < days.length; i++) {
      for (let j = i; j < i + DAYS_AT_ONCE; j++) open(j);
      const reader = readers.get(i)!;
      for (let page = await reader.next(); !page.done; page = await reader.next()) yield page.value;
      readers.delete(i);
    }
  } finally {
    for (const reader of readers.values()) void reader.return?.().catch(() => undefined);
  }
}

/** One day's statement, a page at a time, its failures as the errors a reconciliation answers. */
async function* dayPages(client: PartnerClient, partner: string, day: string): AsyncGenerator<StagedLine[]> {
  try {
    for await (const page of client.statementPages(day, STATEMENT_PAGE_LINES)) {
      yield page.lines.map(entryOf).filter((entry): entry is StagedLine => entry !== null);
    }
  } catch (error) {
    if (error instanceof DomainError) throw error;
    if (isPartnerError(error) && error.kind === 'unavailable') {
      throw new DomainError('partner_unavailable', `${partner} did not give its statement of ${day}: ${error.message}; nothing was reconciled`, 'partner', { 'Retry-After': '5' });
    }
    throw new DomainError('partner_error', `${partner} answered the statement of ${day} with an error: ${(error as Error).message}; nothing was reconciled`, 'partner');
  }
}

/**
 * `source` read `depth` items ahead of its reader: an async generator runs on to its next item
 * as soon as one is asked of it, while the reader is busy with the last. A failure ahead is
 * raised when the reader reaches it.
 */
function readAhead<T>(source: AsyncGenerator<T>, depth: number): AsyncIterator<T> {
  const ahead: Array<Promise<IteratorResult<T>>> = [];
  const fill = () => {
    while (ahead.length < depth) {
      const next = source.next();
      next.catch(() => undefined); // raised to the reader when it gets there, never as unhandled
      ahead.push(next);
    }
  };
  fill();
  return {
    async next() {
      if (ahead.length === 0) fill();
      const result = await ahead.shift()!;
      if (!result.done) fill();
      return result;
    },
    async return() {
      ahead.length = 0;
      return source.return(undefined);
    },
  };
}
