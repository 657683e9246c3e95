// A whole matching run over sides held in memory (match.ts's passes, and search.ts's): the
// unit tests' and the model's form of what a run of the service does in SQL and a worker thread.
import { Money, type Currency } from '../../ledger/money';
import { format, ITEM_CATEGORIES, Matcher, type CurrencyTotals, type ItemCategory, type LedgerMovement, type MatchReport, type MatchRules, type ReportItem, type StatementEntry } from './match';
import { searchPass, type SearchBudget } from './search';

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

export const summaryOf = (items: ReportItem[]): Record<ItemCategory, number> => {
  const summary = Object.fromEntries(ITEM_CATEGORIES.map((c) => [c, 0])) as Record<ItemCategory, number>;
  for (const item of items) summary[item.category] += 1;
  return summary;
};

/** An unbounded budget, for callers that match a handful of sides. */
export const UNBOUNDED: SearchBudget = { steps: Number.MAX_SAFE_INTEGER, deadline: Number.MAX_SAFE_INTEGER };

/** Only the searching passes, over what the certain ones left (a run of the service: run.ts does those in SQL). */
export function searchLeftovers(movements: LedgerMovement[], lines: StatementEntry[], rules: MatchRules, budget: SearchBudget): { items: ReportItem[]; notExamined: number } {
  const matcher = new Matcher(rules);
  const ordered = [...movements].sort((a, b) => a.date.localeCompare(b.date) || a.entryId.localeCompare(b.entryId));
  searchPass(matcher, ordered, lines, budget);
  matcher.leftovers(ordered, lines);
  return { items: matcher.items, notExamined: matcher.notExamined };
}

export function reconcile(movements: LedgerMovement[], lines: StatementEntry[], rules: MatchRules, budget: SearchBudget = UNBOUNDED): MatchReport {
  const orderedMovements = [...movements].sort((a, b) => a.date.localeCompare(b.date) || a.entryId.localeCompare(b.entryId));
  const matcher = new Matcher(rules);
  matcher.byReference(orderedMovements, lines);
  matcher.byBatchDetail(orderedMovements, lines);
  searchPass(matcher, orderedMovements, lines, budget);
  matcher.leftovers(orderedMovements, lines);
  return { summary: summaryOf(matcher.items), totals: totalsOf(rules, movements, lines, matcher.items), items: matcher.items, not_examined: matcher.notExamined };
}

/** What earlier runs matched, movement ↔ line: neither side is ever matched again. */
export interface MatchBook { movements: Map<string, string>; lines: Set<string> }

/**
 * A run that knows what earlier runs matched (the pure form of what run.ts does with the
 * table of matches): sides matched before are left out of the matching, and the new matches are
 * added to `book`. A line whose movement an earlier run paired with another line stays alone,
 * an exception: the partner settled the payment twice.
 */
export function reconcileRun(movements: LedgerMovement[], lines: StatementEntry[], rules: MatchRules, book: MatchBook, budget: SearchBudget = UNBOUNDED): MatchReport {
  const report = reconcile(movements.filter((m) => !book.movements.has(m.entryId)), lines.filter((l) => !book.lines.has(l.lineId)), rules, budget);
  for (const item of report.items) {
    if (item.category !== 'matched' || item.ledger_entry_id === null || item.statement_line_id === null) continue;
    book.movements.set(item.ledger_entry_id, item.statement_line_id);
    book.lines.add(item.statement_line_id);
  }
  return report;
}
