// The exceptions queue of the model-based tests of matching (test/support/reconcile-model.ts): what
// the runs leave open, checked against the truth of the days, and what adjusting each exception
// that is sure of itself would post.
import { Money, type Amount } from '../../ledger/money';
import type { ReportItem } from '../../src/reconciliation/match';
import { amountOf, Totals, type ModelDay } from './reconcile-model';

/**
 * The exceptions queue as a run records it (src/reconciliation/run-exceptions.ts), for several runs over
 * the same days: one exception per pair of sides, ever; a match closes the exceptions of its
 * sides; a mismatched pair closes the ones of its sides alone; a batch closes those of the payments it
 * lists alone (ledger_only, or ambiguous with no line); an open batch takes the run's sum.
 */
export class ExceptionQueue {
  readonly open = new Map<string, ReportItem>();
  private readonly known = new Set<string>();

  record(items: ReportItem[]): void {
    const key = (i: ReportItem) => `${i.ledger_entry_id ?? ''}|${i.statement_line_id ?? ''}`;
    for (const item of items.filter((i) => i.category === 'matched' || i.category === 'mismatched')) {
      for (const [k, x] of this.open) {
        const sameMove = item.ledger_entry_id !== null && x.ledger_entry_id === item.ledger_entry_id;
        const sameLine = item.statement_line_id !== null && x.statement_line_id === item.statement_line_id;
        const closes = item.category === 'matched'
          ? (sameMove && ['ledger_only', 'mismatched', 'ambiguous'].includes(x.category)) || (sameLine && ['statement_only', 'mismatched', 'ambiguous', 'batch'].includes(x.category))
          : (sameMove && x.category === 'ledger_only') || (sameLine && x.category === 'statement_only' && x.ledger_entry_id === null);
        if (closes) this.open.delete(k);
      }
    }
    // A payment once alone that a batch line now lists is the batch's (its exception closes).
    for (const item of items.filter((i) => i.category === 'batch')) {
      for (const m of item.movements!) {
        for (const [k, x] of this.open) {
          if ((x.category === 'ledger_only' || x.category === 'ambiguous') && x.statement_line_id === null && x.ledger_entry_id === m.ledger_entry_id) this.open.delete(k);
        }
      }
    }
    for (const item of items.filter((i) => i.category === 'batch')) {
      const open = this.open.get(key(item));
      if (open?.category === 'batch') this.open.set(key(item), { ...open, ledger_amount: item.ledger_amount, statement_amount: item.statement_amount, movements: item.movements });
    }
    for (const item of items.filter((i) => i.category !== 'matched')) {
      if (this.known.has(key(item))) continue;
      this.known.add(key(item));
      this.open.set(key(item), item);
    }
  }

  /** Every side of a day `covered` matched (in `book`) or in exactly one open exception, and the open ones balancing the sides. */
  check(day: ModelDay, covered: (date: string) => boolean, book: { movements: Map<string, string>; lines: Set<string> }): string[] {
    return checkOpen(day, covered, book, [...this.open.values()]);
  }
}

/** Every side of a day `covered` matched (in `book`) or in exactly one of the `open` exceptions, and these balancing the sides they name. */
export function checkOpen(day: ModelDay, covered: (date: string) => boolean, book: { movements: Map<string, string>; lines: Set<string> }, open: ReportItem[]): string[] {
  const wrong: string[] = [];
  const moves = new Map<string, number>();
  const lines = new Map<string, number>();
  const count = (seen: Map<string, number>, k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
  for (const x of open) {
    for (const m of x.category === 'batch' ? x.movements!.map((s) => s.ledger_entry_id) : x.ledger_entry_id ? [x.ledger_entry_id] : []) count(moves, m);
    if (x.statement_line_id) count(lines, x.statement_line_id);
  }
  for (const m of day.movements) {
    const n = (moves.get(m.entryId) ?? 0) + (book.movements.has(m.entryId) ? 1 : 0);
    if (n > 1 || (n === 0 && covered(m.date))) wrong.push(`movement ${m.entryId}: matched or open ${n} times`);
  }
  for (const l of day.lines) {
    const n = (lines.get(l.lineId) ?? 0) + (book.lines.has(l.lineId) ? 1 : 0);
    if (n > 1 || (n === 0 && covered(l.valueDate))) wrong.push(`line ${l.lineId}: matched or open ${n} times`);
  }
  const movement = new Map(day.movements.map((m) => [m.entryId, m]));
  const line = new Map(day.lines.map((l) => [l.lineId, l]));
  const adjustments = new Totals();
  const sides = new Totals();
  for (const x of open) adjustments.add(x.currency, amountOf(x.statement_amount).minus(amountOf(x.ledger_amount)));
  for (const l of lines.keys()) sides.add(line.get(l)!.currency, line.get(l)!.net);
  for (const m of moves.keys()) sides.add(movement.get(m)!.currency, movement.get(m)!.amount.negated());
  for (const c of Totals.currencies(adjustments, sides)) {
    if (!adjustments.of(c).isEqualTo(sides.of(c))) wrong.push(`the open exceptions adjust ${adjustments.of(c).toFixed(2)} ${c}, the sides they name differ by ${sides.of(c).toFixed(2)} ${c}: the trial balance is off`);
  }
  return wrong;
}

/**
 * What adjusting each open exception sure of itself posts, as the truth has it: statement − ledger
 * over the sides it names, its line's net less its movements' amounts (zero: there is nothing to
 * adjust, a value date that disagrees). Not sure: an ambiguous or not examined exception, and any
 * whose side one of those names (finance matches that by hand; an adjustment would guess).
 */
export function sureDifferences<T extends ReportItem>(day: ModelDay, open: T[]): Array<{ exception: T; difference: Amount }> {
  const unsure = new Set<string>();
  for (const x of open.filter((i) => i.category === 'ambiguous' || i.reason === 'not_examined')) {
    for (const side of [x.ledger_entry_id, x.statement_line_id, ...(x.candidates ?? []).flatMap((c) => [c.ledger_entry_id, c.statement_line_id])]) if (side) unsure.add(side);
  }
  const movement = new Map(day.movements.map((m) => [m.entryId, m]));
  const line = new Map(day.lines.map((l) => [l.lineId, l]));
  return open.filter((x) => !unsure.has(x.ledger_entry_id ?? '') && !unsure.has(x.statement_line_id ?? '')
    && !(x.movements ?? []).some((m) => unsure.has(m.ledger_entry_id)))
    .map((exception) => {
      const moves = exception.category === 'batch' ? exception.movements!.map((m) => m.ledger_entry_id) : exception.ledger_entry_id ? [exception.ledger_entry_id] : [];
      const net = exception.statement_line_id ? line.get(exception.statement_line_id)!.net : new Money(0);
      return { exception, difference: moves.reduce((sum, m) => sum.minus(movement.get(m)!.amount), net) };
    });
}

/**
 * The books agree, in each currency: what the settlement account moved by (`moved`: the stretches'
 * payments and the adjustments posted, read from the ledger), less the payments no run reported,
 * plus what the `open` exceptions would still adjust and what each match let pass within the
 * tolerance, is what the statements' reported lines say, to the cent. `handled`: each stretch's
 * sides that were matched (its book) or in an exception when the runs ended.
 */
export function booksDisagree(stretches: Array<{ day: ModelDay; book: { movements: Map<string, string>; lines: Set<string> }; handled: Set<string> }>,
  moved: Totals, open: ReportItem[]): string[] {
  const statement = new Totals();
  const accounted = new Totals();
  for (const c of Totals.currencies(moved)) accounted.add(c, moved.of(c));
  for (const x of open) accounted.add(x.currency, amountOf(x.statement_amount).minus(amountOf(x.ledger_amount)));
  for (const { day, book, handled } of stretches) {
    const line = new Map(day.lines.map((l) => [l.lineId, l]));
    for (const l of day.lines) if (book.lines.has(l.lineId) || handled.has(l.lineId)) statement.add(l.currency, l.net);
    for (const m of day.movements) {
      if (!book.movements.has(m.entryId) && !handled.has(m.entryId)) accounted.add(m.currency, m.amount.negated()); // never reported
    }
    const movement = new Map(day.movements.map((m) => [m.entryId, m]));
    const gaps = new Map<string, Amount>();
    for (const [m, l] of book.movements) gaps.set(l, (gaps.get(l) ?? line.get(l)!.net).minus(movement.get(m)!.amount));
    for (const [l, gap] of gaps) accounted.add(line.get(l)!.currency, gap);
  }
  return Totals.currencies(statement, accounted).filter((c) => !statement.of(c).isEqualTo(accounted.of(c)))
    .map((c) => `the settlement account, the open exceptions and the matches account for ${accounted.of(c).toFixed(2)} ${c}, the statements say ${statement.of(c).toFixed(2)} ${c}`);
}
