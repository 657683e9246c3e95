// The partner's side of a reconciliation: its daily statements, fetched over its OAuth-protected
// API with the client's own credentials. (The ledger's side, the movements on the partner's
// settlement accounts sys:partner:<partner>:<currency>, is read where it lies: staged.ts.)
import { DomainError } from '../errors';
import { CURRENCY_SCALE, isCurrency, Money } from '../../ledger/money';
import type { PartnerClient, PartnerStatementLine } from '../partners/client';
import { isPartnerError } from '../partners/errors';
import type { StatementEntry } from './match';

const DAY_MS = 86_400_000;
/** Days before and after the range read on both sides, so that a line a few days early or late still finds its movement. */
export const LOOKAROUND_DAYS = 7;
/** Statements fetched at once from a partner. */
const FETCH_CONCURRENCY = 4;

export const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** Every day from `from` to `to`, inclusive. */
export function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day);
  return days;
}

function entryOf(line: PartnerStatementLine): StatementEntry | null {
  if (!isCurrency(line.currency)) return null;
  const scale = CURRENCY_SCALE[line.currency];
  const amount = (text: string) => new Money(text).decimalPlaces(scale);
  return {
    lineId: line.id, reference: line.reference, currency: line.currency, amount: amount(line.amount), fee: amount(line.fee), net: amount(line.net), valueDate: line.value_date,
    settles: Array.isArray(line.settles) ? line.settles.filter((r): r is string => typeof r === 'string') : null,
  };
}

/**
 * The partner's statements of every day from `from` to `to`, a day's lines at a time, in day
 * order; up to FETCH_CONCURRENCY days are fetched ahead, so at most that many are held at once.
 */
export async function* statementDays(client: PartnerClient, partner: string, from: string, to: string): AsyncGenerator<StatementEntry[]> {
  const days = daysOf(from, to);
  const fetchDay = async (day: string): Promise<StatementEntry[]> => {
    try {
      const statement = await client.getStatement(day);
      return statement.lines.map(entryOf).filter((entry): entry is StatementEntry => entry !== null);
    } catch (error) {
      if (isPartnerError(error) && error.kind === 'unavailable') {
        throw new DomainError('partner_unavailable', `${partner} did not give its statement of ${day}: ${error.message}; nothing was reconciled`, 'partner', { 'Retry-After': '5' });
      }
      throw new DomainError('partner_error', `${partner} answered the statement of ${day} with an error: ${(error as Error).message}; nothing was reconciled`, 'partner');
    }
  };
  const ahead: Array<Promise<StatementEntry[]>> = [];
  // A day fetched ahead that fails is awaited in its turn; until then its rejection is held.
  const fetchAhead = (day: string) => { const pending = fetchDay(day); pending.catch(() => undefined); ahead.push(pending); };
  days.slice(0, FETCH_CONCURRENCY).forEach(fetchAhead);
  for (let next = FETCH_CONCURRENCY; ahead.length > 0; next += 1) {
    const lines = await ahead.shift()!;
    if (next < days.length) fetchAhead(days[next]);
    yield lines;
  }
}
