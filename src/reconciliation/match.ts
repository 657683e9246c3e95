// Matches the ledger's movements on a partner's settlement account against the lines of the
// partner's statements. A match is never wrong, only unsure (DESIGN.md section 5e):
//   1. a reference on both sides decides: a movement and a line of one partner reference are a
//      pair (a pair that disagrees is `mismatched`, naming the field; a further line of that
//      reference is a duplicate, `statement_only`); references that differ never pair;
//   2. a batch line that lists the references it settles is paired with their movements; when
//      they do not add up to it, the line and its movements are ONE `batch` item whose amounts
//      are the line's net and the movements' sum, so an adjustment posts the true difference;
//   3. where a side carries no reference, by amount and date, or a batch line without detail by
//      a set of movements adding up to it (search.ts): only when exactly one explanation fits;
//      two or more make an `ambiguous` item listing the candidates, for a person to choose;
//   4. what is left: `ledger_only` and `statement_only`.
// A side matched by an earlier run is never matched again (the run leaves it out: run.ts and
// reconcileRun in match-in-memory.ts). Pure: the caller reads the sides and stores the report. A run of
// the service does passes 1 and 2 in SQL (run.ts) and pass 3 in a worker thread (search-thread.ts).
import { CURRENCY_SCALE, Money, type Amount, type Currency } from '../../ledger/money';

/** A movement on the settlement account, signed as the partner sees it: + credited to us (a pay-in settled), − debited. */
export interface LedgerMovement {
  entryId: string;
  /** The partner's payment id the movement settles, if the ledger knows it. */
  reference: string | null;
  currency: Currency;
  amount: Amount;
  /** YYYY-MM-DD (UTC) of the posting. */
  date: string;
}

export interface StatementEntry {
  /** Unique per partner: the partner's line id, or an uploaded line's name by its content (statement-csv.ts). */
  lineId: string;
  /** The partner's reference; null: the line carries none (bank exports often do not). */
  reference: string | null;
  currency: Currency;
  /** Gross, signed like a movement. */
  amount: Amount;
  fee: Amount;
  /** amount − fee: what the ledger should have moved. */
  net: Amount;
  valueDate: string;
  /** A batch line's settlement detail: the partner references it settles (null: none given). */
  settles: string[] | null;
}

export interface MatchRules {
  /** First and last day reported (YYYY-MM-DD, inclusive); movements and lines around it only help match. */
  from: string;
  to: string;
  amountTolerance: Amount;
  dateToleranceDays: number;
}

export type ItemCategory = 'matched' | 'ledger_only' | 'statement_only' | 'mismatched' | 'ambiguous' | 'batch';
export const ITEM_CATEGORIES: readonly ItemCategory[] = ['matched', 'ledger_only', 'statement_only', 'mismatched', 'ambiguous', 'batch'];
export type ItemField = 'currency' | 'fee' | 'amount' | 'value_date' | 'reference';

/** The ledger side of an item, as exceptions show it. */
export interface MovementSide { ledger_entry_id: string; reference: string | null; amount: string; value_date: string }
/** A possible other side of an ambiguous item. */
export interface Candidate { ledger_entry_id: string | null; statement_line_id: string | null; reference: string | null; amount: string; value_date: string }

export interface ReportItem {
  category: ItemCategory;
  ledger_entry_id: string | null;
  statement_line_id: string | null;
  reference: string | null;
  currency: Currency;
  ledger_amount: string | null;
  statement_amount: string | null;
  /** The field that disagreed (mismatched; a duplicate line: reference); null otherwise. */
  field: ItemField | null;
  ledger_value: string | null;
  statement_value: string | null;
  /** How it matched (MATCHED_BY) or why it did not. */
  reason: string;
  /** The ledger side of an unmatched item (a batch: every listed movement); null for a matched one. */
  movements: MovementSide[] | null;
  /** An ambiguous item's possible other sides; null otherwise. */
  candidates: Candidate[] | null;
}

export interface CurrencyTotals { currency: Currency; ledger: string; statement: string; matched: string; difference: string }

export interface MatchReport {
  summary: Record<ItemCategory, number>;
  totals: CurrencyTotals[];
  items: ReportItem[];
  /** Sides the run's search budget did not reach: reported with reason `not_examined`, never matched. */
  not_examined: number;
}

/** How a matched item matched. */
export const MATCHED_BY = { reference: 'reference', amountAndDate: 'amount_and_date', subset: 'subset' } as const;
export const NOT_EXAMINED = 'not_examined';

/** The reasons items give, shared with the passes that run in SQL (run.ts). */
export const REASONS = {
  noLine: 'no statement line settles it',
  noMovement: 'no ledger movement matches this line',
  duplicate: (reference: string, lineId: string) => `a second line for reference ${reference}, which line ${lineId} already settles: the partner counted it twice`,
  batchDisagrees: (lineId: string, found: number | string, listed: number | string) => `batch line ${lineId}: the ${found} of its ${listed} listed payments the ledger has add up to another amount`,
  batchOtherCurrency: (lineId: string, lineCurrency: string, currency: string) => `batch line ${lineId} in ${lineCurrency} lists this payment in ${currency}: an item of its own currency, never summed with the line's`,
  ambiguousLine: (n: number) => `no reference, and ${n} ledger movements fit it: choose one`,
  ambiguousMovement: (n: number) => `no reference, and ${n} statement lines fit it: choose one`,
  unexaminedMayExplain: (n: number) => `${n} statement line${n === 1 ? '' : 's'} the search did not examine (not_examined) may settle it: look at ${n === 1 ? 'it' : 'them'} before adjusting`,
};

const DAY_MS = 86_400_000;
export const daysBetween = (a: string, b: string) => Math.abs(Date.parse(`${a}T00:00:00Z`) - Date.parse(`${b}T00:00:00Z`)) / DAY_MS;
export const format = (amount: Amount, currency: Currency) => amount.toFixed(CURRENCY_SCALE[currency], Money.ROUND_HALF_EVEN);
export const sideOf = (m: LedgerMovement): MovementSide => ({ ledger_entry_id: m.entryId, reference: m.reference, amount: format(m.amount, m.currency), value_date: m.date });

type ItemFacts = Pick<ReportItem, 'category' | 'field' | 'ledger_value' | 'statement_value' | 'reason'> & Partial<Pick<ReportItem, 'movements' | 'candidates' | 'ledger_amount' | 'statement_amount'>>;

export class Matcher {
  readonly items: ReportItem[] = [];
  readonly movementUsed = new Set<LedgerMovement>();
  readonly lineUsed = new Set<StatementEntry>();
  notExamined = 0;
  readonly inRange = (date: string) => date >= this.rules.from && date <= this.rules.to;

  constructor(readonly rules: MatchRules) {}

  closeAmount(a: Amount, b: Amount): boolean {
    return a.minus(b).abs().isLessThanOrEqualTo(this.rules.amountTolerance);
  }

  closeDate(a: string, b: string): boolean {
    return daysBetween(a, b) <= this.rules.dateToleranceDays;
  }

  /** Records an item when a side of it falls on a day the report covers. */
  add(m: LedgerMovement | null, line: StatementEntry | null, item: ItemFacts, inRange = (m !== null && this.inRange(m.date)) || (line !== null && this.inRange(line.valueDate))): void {
    const currency = (m?.currency ?? line?.currency)!;
    if (!inRange) return;
    this.items.push({
      ledger_entry_id: m?.entryId ?? null, statement_line_id: line?.lineId ?? null, reference: m?.reference ?? line?.reference ?? null, currency,
      ledger_amount: m ? format(m.amount, currency) : null, statement_amount: line ? format(line.net, line.currency) : null,
      movements: item.category === 'matched' ? null : (m ? [sideOf(m)] : []), candidates: null, ...item,
    });
  }

  pair(m: LedgerMovement, line: StatementEntry, how: string): void {
    this.movementUsed.add(m);
    this.lineUsed.add(line);
    const none = { ledger_value: null, statement_value: null };
    if (m.currency !== line.currency) {
      this.add(m, line, { category: 'mismatched', field: 'currency', ledger_value: m.currency, statement_value: line.currency, reason: `${how}, but the currencies differ` });
    } else if (!this.closeAmount(m.amount, line.net)) {
      const feeExplains = !line.fee.isZero() && this.closeAmount(m.amount, line.amount);
      this.add(m, line, feeExplains
        ? { category: 'mismatched', field: 'fee', ledger_value: format(new Money(0), m.currency), statement_value: format(line.fee, m.currency), reason: `${how}, but the partner took a fee the ledger does not have` }
        : { category: 'mismatched', field: 'amount', ledger_value: format(m.amount, m.currency), statement_value: format(line.net, m.currency), reason: `${how}, but the amounts differ` });
    } else if (!this.closeDate(m.date, line.valueDate)) {
      this.add(m, line, { category: 'mismatched', field: 'value_date', ledger_value: m.date, statement_value: line.valueDate, reason: `${how}, but the value date is ${daysBetween(m.date, line.valueDate)} days from the posting, beyond the tolerance of ${this.rules.dateToleranceDays}` });
    } else {
      this.add(m, line, { category: 'matched', field: null, ...none, reason: how });
    }
  }

  byReference(movements: LedgerMovement[], lines: StatementEntry[]): void {
    const linesByReference = new Map<string, StatementEntry[]>();
    for (const line of lines) {
      if (line.reference === null) continue;
      const same = linesByReference.get(line.reference);
      if (same) same.push(line);
      else linesByReference.set(line.reference, [line]);
    }
    for (const m of movements) {
      const candidates = m.reference === null ? undefined : linesByReference.get(m.reference);
      if (!candidates) continue;
      const line = candidates.find((l) => !this.lineUsed.has(l) && l.currency === m.currency) ?? candidates.find((l) => !this.lineUsed.has(l));
      if (!line) continue;
      this.pair(m, line, MATCHED_BY.reference);
      // A duplicate has no ledger side: the partner's second count is all the difference.
      for (const duplicate of candidates.filter((l) => !this.lineUsed.has(l))) {
        this.lineUsed.add(duplicate);
        this.add(null, duplicate, {
          category: 'statement_only', field: 'reference', ledger_value: null, statement_value: duplicate.reference, reason: REASONS.duplicate(duplicate.reference!, line.lineId),
        }, this.inRange(m.date) || this.inRange(duplicate.valueDate));
      }
    }
  }

  /** Batch lines that list what they settle, with the movements of those references: matched, or one `batch` item. */
  byBatchDetail(movements: LedgerMovement[], lines: StatementEntry[]): void {
    const byReference = new Map<string, LedgerMovement>();
    for (const m of movements) if (m.reference !== null && !this.movementUsed.has(m) && !byReference.has(m.reference)) byReference.set(m.reference, m);
    for (const line of lines.filter((l) => !this.lineUsed.has(l) && l.settles !== null && l.settles.length > 0)) {
      const group = [...new Set(line.settles!)].map((reference) => byReference.get(reference)).filter((m): m is LedgerMovement => m !== undefined && !this.movementUsed.has(m));
      if (group.length === 0) continue;
      this.lineUsed.add(line);
      for (const m of group) this.movementUsed.add(m);
      const total = group.reduce((sum, m) => sum.plus(m.amount), new Money(0));
      const shown = this.inRange(line.valueDate) || group.some((m) => this.inRange(m.date));
      if (group.length === line.settles!.length && group.every((m) => m.currency === line.currency) && this.closeAmount(total, line.net)) {
        for (const m of group) this.add(m, line, { category: 'matched', field: null, ledger_value: null, statement_value: null, reason: MATCHED_BY.reference }, shown);
      } else {
        // Summed in the line's currency only: a listed payment in another is an item of its own.
        const same = group.filter((m) => m.currency === line.currency);
        const sameTotal = same.reduce((sum, m) => sum.plus(m.amount), new Money(0));
        this.add(null, line, {
          category: 'batch', field: 'amount', ledger_amount: format(sameTotal, line.currency), ledger_value: format(sameTotal, line.currency), statement_value: format(line.net, line.currency),
          reason: REASONS.batchDisagrees(line.lineId, group.length, line.settles!.length), movements: same.map(sideOf),
        }, shown);
        for (const m of group.filter((x) => x.currency !== line.currency)) {
          this.add(m, line, {
            category: 'mismatched', field: 'currency', ledger_value: m.currency, statement_value: line.currency, statement_amount: null,
            reason: REASONS.batchOtherCurrency(line.lineId, line.currency, m.currency),
          }, shown);
        }
      }
    }
  }

  leftovers(movements: LedgerMovement[], lines: StatementEntry[]): void {
    for (const m of movements.filter((x) => !this.movementUsed.has(x))) {
      this.add(m, null, { category: 'ledger_only', field: null, ledger_value: null, statement_value: null, reason: `${REASONS.noLine}${m.reference ? ` (partner reference ${m.reference})` : ''}` });
    }
    for (const line of lines.filter((l) => !this.lineUsed.has(l))) {
      this.add(null, line, { category: 'statement_only', field: null, ledger_value: null, statement_value: null, reason: REASONS.noMovement });
    }
  }
}
