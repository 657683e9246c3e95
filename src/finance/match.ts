// Matches the ledger's movements on a partner's settlement account against the lines of the
// partner's statements, in passes from the most certain to the least (the order matching rules
// in reconciliation engines such as Blnk's take):
//   1. one to one by the partner's reference; a pair that disagrees is `mismatched`, naming the
//      field (currency, fee, amount, value_date), and any further line with the same reference
//      is a duplicate, `statement_only`;
//   2. one to many by the settlement detail: a batch line that lists the partner references it
//      settles is matched with the movements of those references;
//   3. one to one by currency, amount within the amount tolerance and date within the date
//      tolerance, for lines whose reference names nothing in the ledger;
//   4. one to many by amount: a batch line without detail (an uploaded statement) is matched with
//      the smallest set of movements of its currency and direction within the date tolerance that
//      adds up to it (batch.ts: a search bounded in size and in steps);
//   5. what is left: `ledger_only` and `statement_only`.
// Pure: the caller reads the ledger and the statements, and stores the report. A run of the
// service does passes 1 and 2 in SQL over both sides staged in Postgres (staged.ts) and these
// passes over what they leave, so a day of any size is never held here whole.
import { CURRENCY_SCALE, Money, type Amount, type Currency } from '../../ledger/money';
import { subsetAddingUpTo } from './batch';

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
  lineId: string;
  reference: string;
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

export type ItemCategory = 'matched' | 'ledger_only' | 'statement_only' | 'mismatched';
export type ItemField = 'currency' | 'fee' | 'amount' | 'value_date' | 'reference';

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
  reason: string;
}

export interface CurrencyTotals { currency: Currency; ledger: string; statement: string; matched: string; difference: string }

export interface MatchReport {
  summary: Record<ItemCategory, number>;
  totals: CurrencyTotals[];
  items: ReportItem[];
}

/** The reasons items give, shared with the passes that run in SQL (staged.ts). */
export const REASONS = {
  byReference: 'same partner reference',
  noLine: 'no statement line settles it',
  duplicate: (reference: string, lineId: string) => `a second line for reference ${reference}, which line ${lineId} already settles: the partner counted it twice`,
  batchListed: (lineId: string, listed: number | string) => `listed by batch line ${lineId} among the ${listed} payments it settles (settlement detail)`,
  batchDisagrees: (lineId: string, found: number | string, listed: number | string) => `listed by batch line ${lineId}, but the ${found} of its ${listed} payments the ledger has add up to another amount`,
};

const DAY_MS = 86_400_000;
const daysBetween = (a: string, b: string) => Math.abs(Date.parse(`${a}T00:00:00Z`) - Date.parse(`${b}T00:00:00Z`)) / DAY_MS;
const format = (amount: Amount, currency: Currency) => amount.toFixed(CURRENCY_SCALE[currency], Money.ROUND_HALF_EVEN);

class Matcher {
  readonly items: ReportItem[] = [];
  private readonly movementUsed = new Set<LedgerMovement>();
  private readonly lineUsed = new Set<StatementEntry>();
  private readonly inRange = (date: string) => date >= this.rules.from && date <= this.rules.to;

  constructor(private readonly rules: MatchRules) {}

  private closeAmount(a: Amount, b: Amount): boolean {
    return a.minus(b).abs().isLessThanOrEqualTo(this.rules.amountTolerance);
  }

  private closeDate(a: string, b: string): boolean {
    return daysBetween(a, b) <= this.rules.dateToleranceDays;
  }

  private add(m: LedgerMovement | null, line: StatementEntry | null, item: Pick<ReportItem, 'category' | 'field' | 'ledger_value' | 'statement_value' | 'reason'>): void {
    const currency = (m?.currency ?? line?.currency)!;
    // Pairs and leftovers are reported when a side of them falls on a day the report covers.
    if (!(m && this.inRange(m.date)) && !(line && this.inRange(line.valueDate))) return;
    this.items.push({
      ledger_entry_id: m?.entryId ?? null, statement_line_id: line?.lineId ?? null, reference: m?.reference ?? line?.reference ?? null, currency,
      ledger_amount: m ? format(m.amount, currency) : null, statement_amount: line ? format(line.net, line.currency) : null, ...item,
    });
  }

  private pair(m: LedgerMovement, line: StatementEntry, how: string): void {
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
      const same = linesByReference.get(line.reference);
      if (same) same.push(line);
      else linesByReference.set(line.reference, [line]);
    }
    for (const m of movements) {
      const candidates = m.reference === null ? undefined : linesByReference.get(m.reference);
      if (!candidates) continue;
      const line = candidates.find((l) => !this.lineUsed.has(l) && l.currency === m.currency) ?? candidates.find((l) => !this.lineUsed.has(l));
      if (!line) continue;
      this.pair(m, line, REASONS.byReference);
      for (const duplicate of candidates.filter((l) => !this.lineUsed.has(l))) {
        this.lineUsed.add(duplicate);
        this.add(m, duplicate, {
          category: 'statement_only', field: 'reference', ledger_value: null, statement_value: duplicate.reference,
          reason: REASONS.duplicate(duplicate.reference, line.lineId),
        });
      }
    }
  }

  byAmountAndDate(movements: LedgerMovement[], lines: StatementEntry[]): void {
    const open = lines.filter((l) => !this.lineUsed.has(l)).sort((a, b) => a.net.comparedTo(b.net) ?? 0);
    const byCurrency = new Map<Currency, StatementEntry[]>();
    for (const line of open) {
      const same = byCurrency.get(line.currency);
      if (same) same.push(line);
      else byCurrency.set(line.currency, [line]);
    }
    for (const m of movements.filter((x) => !this.movementUsed.has(x))) {
      const sorted = byCurrency.get(m.currency) ?? [];
      const low = m.amount.minus(this.rules.amountTolerance);
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sorted[mid].net.isLessThan(low)) lo = mid + 1;
        else hi = mid;
      }
      let best: StatementEntry | null = null;
      for (let i = lo; i < sorted.length && this.closeAmount(sorted[i].net, m.amount); i += 1) {
        const line = sorted[i];
        if (this.lineUsed.has(line) || !this.closeDate(m.date, line.valueDate)) continue;
        if (!best || daysBetween(m.date, line.valueDate) < daysBetween(m.date, best.valueDate)) best = line;
      }
      if (best) this.pair(m, best, 'same currency, amount and date within the tolerances (no reference in common)');
    }
  }

  /** Batch lines that list what they settle, matched with the movements of those references. */
  byBatchDetail(movements: LedgerMovement[], lines: StatementEntry[]): void {
    const byReference = new Map<string, LedgerMovement>();
    for (const m of movements) if (m.reference !== null && !this.movementUsed.has(m)) byReference.set(m.reference, m);
    for (const line of lines.filter((l) => !this.lineUsed.has(l) && l.settles !== null && l.settles.length > 0)) {
      const group = line.settles!.map((reference) => byReference.get(reference)).filter((m): m is LedgerMovement => m !== undefined && !this.movementUsed.has(m));
      if (group.length === 0) continue;
      this.lineUsed.add(line);
      const total = group.reduce((sum, m) => sum.plus(m.amount), new Money(0));
      const agrees = group.length === line.settles!.length && this.closeAmount(total, line.net);
      for (const m of group) {
        this.movementUsed.add(m);
        this.add(m, line, agrees
          ? { category: 'matched', field: null, ledger_value: null, statement_value: null, reason: REASONS.batchListed(line.lineId, line.settles!.length) }
          : {
            category: 'mismatched', field: 'amount', ledger_value: format(total, m.currency), statement_value: format(line.net, m.currency),
            reason: REASONS.batchDisagrees(line.lineId, group.length, line.settles!.length),
          });
      }
    }
  }

  /** Batch lines without detail, matched with the smallest set of movements that adds up to them. */
  byBatchAmount(movements: LedgerMovement[], lines: StatementEntry[]): void {
    for (const line of lines.filter((l) => !this.lineUsed.has(l))) {
      const near = movements.filter((m) => !this.movementUsed.has(m) && m.currency === line.currency
        && m.amount.isNegative() === line.net.isNegative() && this.closeDate(m.date, line.valueDate));
      const group = subsetAddingUpTo(near, line.net, this.rules.amountTolerance);
      if (!group) continue;
      this.lineUsed.add(line);
      for (const m of group) {
        this.movementUsed.add(m);
        this.add(m, line, { category: 'matched', field: null, ledger_value: null, statement_value: null, reason: `one of ${group.length} movements that add up to batch line ${line.lineId} (no settlement detail: matched by amount)` });
      }
    }
  }

  leftovers(movements: LedgerMovement[], lines: StatementEntry[]): void {
    for (const m of movements.filter((x) => !this.movementUsed.has(x))) {
      this.add(m, null, { category: 'ledger_only', field: null, ledger_value: null, statement_value: null, reason: `${REASONS.noLine}${m.reference ? ` (partner reference ${m.reference})` : ''}` });
    }
    for (const line of lines.filter((l) => !this.lineUsed.has(l))) {
      this.add(null, line, { category: 'statement_only', field: null, ledger_value: null, statement_value: null, reason: 'no ledger movement matches this line' });
    }
  }
}

function totalsOf(rules: MatchRules, movements: LedgerMovement[], lines: StatementEntry[], items: ReportItem[]): CurrencyTotals[] {
  const zero = () => ({ ledger: new Money(0), statement: new Money(0), matched: new Money(0) });
  const byCurrency = new Map<Currency, ReturnType<typeof zero>>();
  const of = (c: Currency) => byCurrency.get(c) ?? byCurrency.set(c, zero()).get(c)!;
  for (const m of movements) if (m.date >= rules.from && m.date <= rules.to) of(m.currency).ledger = of(m.currency).ledger.plus(m.amount);
  for (const l of lines) if (l.valueDate >= rules.from && l.valueDate <= rules.to) of(l.currency).statement = of(l.currency).statement.plus(l.net);
  for (const i of items) if (i.category === 'matched' && i.ledger_amount !== null) of(i.currency).matched = of(i.currency).matched.plus(i.ledger_amount);
  return [...byCurrency].sort(([a], [b]) => a.localeCompare(b)).map(([currency, t]) => ({
    currency, ledger: format(t.ledger, currency), statement: format(t.statement, currency), matched: format(t.matched, currency),
    difference: format(t.statement.minus(t.ledger), currency),
  }));
}

export function reconcile(movements: LedgerMovement[], lines: StatementEntry[], rules: MatchRules): MatchReport {
  const orderedMovements = [...movements].sort((a, b) => a.date.localeCompare(b.date) || a.entryId.localeCompare(b.entryId));
  const matcher = new Matcher(rules);
  matcher.byReference(orderedMovements, lines);
  matcher.byBatchDetail(orderedMovements, lines);
  matcher.byAmountAndDate(orderedMovements, lines);
  matcher.byBatchAmount(orderedMovements, lines);
  matcher.leftovers(orderedMovements, lines);
  const summary: Record<ItemCategory, number> = { matched: 0, ledger_only: 0, statement_only: 0, mismatched: 0 };
  for (const item of matcher.items) summary[item.category] += 1;
  return { summary, totals: totalsOf(rules, movements, lines, matcher.items), items: matcher.items };
}
