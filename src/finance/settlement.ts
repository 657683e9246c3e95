// The two sides a reconciliation compares: the ledger's movements on a partner's settlement
// accounts (sys:partner:<partner>:<currency>) and the partner's daily statements, fetched over
// its OAuth-protected API with the client's own credentials.
import type { Db } from '../db';
import { DomainError } from '../errors';
import { CURRENCY_SCALE, isCurrency, Money, type Currency } from '../../ledger/money';
import type { PartnerClient, PartnerStatementLine } from '../partners/client';
import { isPartnerError } from '../partners/errors';
import type { LedgerMovement, StatementEntry } from './match';

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

/**
 * The movements on the partner's settlement accounts posted from `from` to `to` (days, UTC,
 * inclusive), signed as the partner sees them: a settled pay-in is posted −x on the settlement
 * account (it owes us less) and is +x on the partner's side; a payout the other way round.
 * Finance's adjustments are left out: they answer exceptions (exceptions.ts), which keep them.
 */
export async function settlementMovements(db: Db, partner: string, from: string, to: string): Promise<LedgerMovement[]> {
  const { rows }: { rows: Array<{ entry_id: string; currency: string; amount: string; day: string; external_id: string | null }> } = await db.raw(
    `SELECT p.entry_id, p.currency, p.amount::text AS amount, to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, pay.external_id
       FROM postings p
       JOIN journal_entries e ON e.id = p.entry_id
       LEFT JOIN payments pay ON pay.id = e.payment_id
      WHERE p.ledger_account_id IN (SELECT id FROM ledger_accounts WHERE code LIKE ? AND kind = 'system')
        AND p.created_at >= ?::date AND p.created_at < ?::date + 1
        AND e.kind <> 'reconciliation_adjustment'`,
    [`sys:partner:${partner}:%`, from, to],
  );
  return rows.filter((row) => isCurrency(row.currency)).map((row) => ({
    entryId: row.entry_id, reference: row.external_id, currency: row.currency as Currency, amount: new Money(row.amount).negated(), date: row.day,
  }));
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

/** The partner's statements of every day from `from` to `to`, as one list of lines. */
export async function fetchStatements(client: PartnerClient, partner: string, from: string, to: string): Promise<StatementEntry[]> {
  const days = daysOf(from, to);
  const lines: StatementEntry[][] = new Array(days.length);
  let next = 0;
  const worker = async () => {
    while (next < days.length) {
      const index = next;
      next += 1;
      try {
        const statement = await client.getStatement(days[index]);
        lines[index] = statement.lines.map(entryOf).filter((entry): entry is StatementEntry => entry !== null);
      } catch (error) {
        if (isPartnerError(error) && error.kind === 'unavailable') {
          throw new DomainError('partner_unavailable', `${partner} did not give its statement of ${days[index]}: ${error.message}; nothing was reconciled`, 'partner', { 'Retry-After': '5' });
        }
        throw new DomainError('partner_error', `${partner} answered the statement of ${days[index]} with an error: ${(error as Error).message}; nothing was reconciled`, 'partner');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, days.length) }, worker));
  return lines.flat();
}
