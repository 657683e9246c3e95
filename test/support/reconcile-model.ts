// A model of reconciliation days for the model-based tests of matching (issue 39): days generated
// from a seed — payments, lines left off, extra lines (some under a reference that names no
// payment, with a payment's amount), duplicates, fees (on lines with a reference and without),
// busy days of one amount with more candidates than the search takes, batches with and without
// settlement detail (some still going on: later exports list one more payment), date shifts,
// lines and movements without a reference, several runs over overlapping days, a stretch's
// payments in its currency and some in another (amounts drawn from one pool, so that they collide
// across currencies), an amount tolerance in some stretches with lines off by cents within it —
// with the truth of each: which movements each line settles. The oracle
// checks a run's report against it: no false match ever; every side of the days reported in
// exactly one item; each unmatched item that is sure of itself (no ambiguity about it) carrying
// exactly the difference its adjustment would post; and the adjustments bringing the sides to
// balance, in each currency.
import { Money, type Amount, type Currency } from '../../ledger/money';
import type { LedgerMovement, MatchRules, ReportItem, StatementEntry } from '../../src/reconciliation/match';
import { prng } from './prng';

export interface ModelDay {
  seed: number;
  movements: LedgerMovement[];
  lines: StatementEntry[];
  /** Each line's true movements (none: a line the ledger has nothing for). */
  owner: Map<string, Set<string>>;
  /** Runs over the days: ranges that may overlap, one after the other. */
  runs: MatchRules[];
  days: number;
  /**
   * A batch that grew: the exports before run `before` list it without its last payment (that
   * payment then on no line), the later ones with it (`lines` and `owner` above). Null: none grew.
   */
  early: { before: number; lines: StatementEntry[]; owner: Map<string, Set<string>> } | null;
}

/** The day as the statement of run `run` (0, 1, ...) shows it: a batch that grows lists its last payment from its run on. */
export function dayAtRun(day: ModelDay, run: number): ModelDay {
  return day.early !== null && run < day.early.before ? { ...day, lines: day.early.lines, owner: day.early.owner } : day;
}

/**
 * The day as the queue holds it after run `run`, given `seen` before it: a batch that grew as the
 * last run that reported its line saw it (the queue's batch exception takes that run's sides).
 */
export function daySeenAfter(day: ModelDay, seen: ModelDay, run: number, items: ReportItem[]): ModelDay {
  if (day.early === null) return day;
  const grown = day.lines.find((l) => !day.early!.lines.includes(l))!;
  return items.some((i) => i.statement_line_id === grown.lineId) ? dayAtRun(day, run) : seen;
}

const FIRST_DAY = Date.parse('2026-03-02T00:00:00Z');
const dayOf = (n: number) => new Date(FIRST_DAY + n * 86_400_000).toISOString().slice(0, 10);
const cents = (n: number) => new Money(n).shiftedBy(-2);
/** The currencies a stretch's payments are in (the partner's fiat ones, two decimals each). */
const DRAWN_CURRENCIES: Currency[] = ['USD', 'EUR', 'GBP'];

/** One generated stretch of 1 to 3 days with its runs; ids are unique within it (`tag` makes them unique across). */
export function generateDays(seed: number, tag = `s${seed}`, at?: number): ModelDay {
  const r = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const span = 1 + Math.floor(r() * 3);
  const start = at ?? Math.floor(r() * 300);
  const tolerance = Math.floor(r() * 3);
  // An amount tolerance in one stretch in three (one to five cents), and some lines off their
  // payment by a few cents within it. Drawn from a stream of their own, so that a seed draws the
  // rest of its days as it did before tolerances were drawn.
  const t = prng(seed ^ 0x2545f491);
  const toleranceCents = t() < 1 / 3 ? 1 + Math.floor(t() * 5) : 0;
  const amountTolerance = cents(toleranceCents);
  const offByCents = (net: Amount): Amount => {
    if (toleranceCents === 0 || t() < 0.6) return net;
    const off = cents(1 + Math.floor(t() * toleranceCents));
    return t() < 0.5 ? net.plus(off) : net.minus(off);
  };
  // Most payments in the stretch's currency, some in another (batches gather the first alone).
  const currency = pick(DRAWN_CURRENCIES);
  const currencyOfPayment = () => (r() < 0.15 ? pick(DRAWN_CURRENCIES.filter((c) => c !== currency)) : currency);
  const movements: LedgerMovement[] = [];
  const lines: StatementEntry[] = [];
  const owner = new Map<string, Set<string>>();
  // Few distinct amounts, so that amounts and sums collide and the matching must know it is unsure.
  // Some whole and some ending in 0 (written "100" and "12.3" by a partner that drops zeros).
  const rounded = (units: number) => (r() < 0.15 ? Math.max(100, Math.round(units / 100) * 100) : r() < 0.2 ? Math.max(100, Math.round(units / 10) * 10) : units);
  const pool = Array.from({ length: 4 + Math.floor(r() * 8) }, () => rounded(100 + Math.floor(r() * 20000)));
  const amountOf = () => (r() < 0.5 ? pick(pool) : rounded(100 + Math.floor(r() * 20000)));
  let n = 0;
  const id = (kind: string) => `${tag}-${kind}${(n += 1)}`;
  const addLine = (reference: string | null, net: Amount, day: number, owners: string[], fee: Amount = new Money(0), settles: string[] | null = null, lineCurrency = currency) => {
    const lineId = id('l');
    lines.push({ lineId, reference, currency: lineCurrency, amount: net.plus(fee), fee, net, valueDate: dayOf(day), settles });
    owner.set(lineId, new Set(owners));
  };
  const shifted = (day: number) => Math.max(start, Math.min(start + span - 1, day + Math.round((r() * 2 - 1) * tolerance)));
  const payments = 3 + Math.floor(r() * 14);
  const detailBatch: LedgerMovement[] = [];
  let batchLine: StatementEntry | null = null;
  const plainBatch: LedgerMovement[] = [];
  for (let i = 0; i < payments; i += 1) {
    const day = start + Math.floor(r() * span);
    const sign = r() < 0.8 ? 1 : -1;
    const amount = cents(amountOf() * sign);
    const ledgerKnowsReference = r() < 0.9;
    const reference = `openbank_${id('p')}`;
    const m: LedgerMovement = { entryId: id('e'), reference: ledgerKnowsReference ? reference : null, currency: currencyOfPayment(), amount, date: dayOf(day) };
    movements.push(m);
    const own = m.currency;
    const inBatch = own === currency;
    // A movement without a reference is told from others by its line alone: it always has one,
    // and one that agrees on the amount (anything else no one could tell apart).
    const fate = ledgerKnowsReference ? r() : pick([0.1, 0.6, 0.8, 0.95]);
    const zero = new Money(0);
    if (fate < 0.45) addLine(reference, offByCents(amount), shifted(day), [m.entryId], zero, null, own);
    else if (fate < 0.55) { /* left off the statement */ } else if (fate < 0.62) {
      addLine(reference, amount, shifted(day), [m.entryId], zero, null, own);
      addLine(reference, amount, shifted(day), [m.entryId], zero, null, own); // the partner counted it twice
    } else if (fate < 0.68 && ledgerKnowsReference) {
      const fee = cents(1 + Math.floor(r() * 300));
      addLine(reference, amount.minus(fee), shifted(day), [m.entryId], fee, null, own);
    } else if (fate < 0.72 && ledgerKnowsReference) {
      addLine(reference, amount, Math.min(start + span - 1 + 3, day + tolerance + 1 + Math.floor(r() * 2)), [m.entryId], zero, null, own); // late beyond the tolerance
    } else if (fate < 0.84) {
      // A bank export without references; some of its lines net of a fee the ledger does not have.
      const fee = r() < 0.3 ? cents(1 + Math.floor(r() * 300)) : zero;
      addLine(null, offByCents(amount).minus(fee), shifted(day), [m.entryId], fee, null, own);
    } else if (fate < 0.92 && ledgerKnowsReference && inBatch) {
      detailBatch.push(m);
    } else if (sign > 0 && fate >= 0.92 && inBatch) {
      plainBatch.push(m);
    } else {
      addLine(reference, amount, shifted(day), [m.entryId], zero, null, own);
    }
  }
  if (r() < 0.02) {
    // One stretch in fifty: a busy day of one amount without references (a payroll): more movements near each line than
    // the search takes (SUBSET_CANDIDATES_MAX), each with its line; no one could tell them apart.
    const amount = cents(amountOf());
    const day = start + Math.floor(r() * span);
    for (let i = 61 + Math.floor(r() * 10); i > 0; i -= 1) {
      const m: LedgerMovement = { entryId: id('e'), reference: null, currency, amount, date: dayOf(day) };
      movements.push(m);
      addLine(null, amount, day, [m.entryId]);
    }
  }
  if (detailBatch.length > 0) {
    // With its detail: sometimes a listed payment never reached the ledger, or the total is off.
    const listed = detailBatch.map((m) => m.reference!);
    if (r() < 0.3) listed.push(`openbank_${id('ghost')}`);
    let net = detailBatch.reduce((sum, m) => sum.plus(m.amount), new Money(0));
    if (listed.length > detailBatch.length) net = net.plus(cents(100 + Math.floor(r() * 900)));
    if (r() < 0.3) net = net.minus(cents(1 + Math.floor(r() * 500)));
    addLine(`batch_${id('b')}`, net, start + Math.floor(r() * span), detailBatch.map((m) => m.entryId), new Money(0), listed);
    batchLine = lines[lines.length - 1];
  }
  if (plainBatch.length > 0) {
    // Without detail (an upload): no reference, so found only by a set adding up to it.
    // Settled together: its payments' days within the tolerance of the line's.
    const net = plainBatch.reduce((sum, m) => sum.plus(m.amount), new Money(0));
    const day = plainBatch[0].date;
    for (const m of plainBatch) m.date = day;
    addLine(null, net, Math.round((Date.parse(`${day}T00:00:00Z`) - FIRST_DAY) / 86_400_000), plainBatch.map((m) => m.entryId));
  }
  const dayNumber = (date: string) => Math.round((Date.parse(`${date}T00:00:00Z`) - FIRST_DAY) / 86_400_000);
  for (let extra = Math.floor(r() * 3); extra > 0; extra -= 1) {
    // Lines the ledger has nothing for: under a reference that names no payment, often with the
    // amount and day of a payment that has one (references that contradict); or with none, then
    // of more than all the movements together (one that some movements add up to could be theirs:
    // no one could tell).
    const like = movements.filter((m) => m.reference !== null);
    if (like.length > 0 && r() < 0.7) {
      const m = pick(like);
      addLine(`openbank_${id('x')}`, m.amount, dayNumber(m.date), [], new Money(0), null, m.currency);
    } else {
      const all = movements.reduce((sum, m) => sum.plus(m.amount.abs()), new Money(0));
      addLine(null, all.plus(cents(1 + Math.floor(r() * 5000))), start + Math.floor(r() * span), [], new Money(0), null, pick(DRAWN_CURRENCIES));
    }
  }
  const last = start + span - 1;
  const runs: MatchRules[] = [];
  for (let k = 1 + Math.floor(r() * 3); k > 0; k -= 1) {
    const from = start + Math.floor(r() * span);
    runs.push({ from: dayOf(from), to: dayOf(from + Math.floor(r() * (last - from + 1))), amountTolerance, dateToleranceDays: tolerance });
  }
  // Sometimes the batch was still going on at the first exports: they list it without its last
  // payment, for that much less (the same line: a batch line is named without its amounts).
  let early: ModelDay['early'] = null;
  if (batchLine !== null && detailBatch.length >= 2 && runs.length >= 2 && r() < 0.5) {
    const joiner = detailBatch[detailBatch.length - 1];
    const net = batchLine.net.minus(joiner.amount);
    const smaller: StatementEntry = { ...batchLine, amount: net, net, settles: batchLine.settles!.filter((ref) => ref !== joiner.reference) };
    early = {
      before: 1 + Math.floor(r() * (runs.length - 1)),
      lines: lines.map((l) => (l === batchLine ? smaller : l)),
      owner: new Map([...owner].map(([l, moves]) => [l, l === batchLine!.lineId ? new Set([...moves].filter((m) => m !== joiner.entryId)) : moves])),
    };
  }
  return { seed, movements, lines, owner, runs, days: span, early };
}

export interface RunFacts {
  /** Pairs before the run (the table of matches): movement → line. */
  bookBefore: Map<string, string>;
}

/** An item's amount as a sum: none is zero. */
export const amountOf = (text: string | null) => new Money(text ?? 0);

/** Sums kept per currency. */
export class Totals {
  private readonly sums = new Map<Currency, Amount>();
  add(currency: Currency, amount: Amount): void { this.sums.set(currency, this.of(currency).plus(amount)); }
  of(currency: Currency): Amount { return this.sums.get(currency) ?? new Money(0); }
  static currencies(...totals: Totals[]): Currency[] { return [...new Set(totals.flatMap((t) => [...t.sums.keys()]))]; }
}

/** The oracle on one run's items; returns what it found wrong (empty: nothing). */
export function checkRun(day: ModelDay, rules: MatchRules, items: ReportItem[], facts: RunFacts): string[] {
  const wrong: string[] = [];
  const owns = (line: string, move: string) => day.owner.get(line)?.has(move) ?? false;
  const inRange = (date: string) => date >= rules.from && date <= rules.to;
  const movement = new Map(day.movements.map((m) => [m.entryId, m]));
  const line = new Map(day.lines.map((l) => [l.lineId, l]));
  const seenMoves = new Map<string, number>();
  const seenLines = new Map<string, number>();
  const count = (seen: Map<string, number>, key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
  // Who is paired with whom in this run, and before it.
  const pairedLinesOf = new Map<string, Set<string>>();
  const pairUp = (m: string, l: string) => (pairedLinesOf.get(m) ?? pairedLinesOf.set(m, new Set()).get(m)!).add(l);
  for (const [m, l] of facts.bookBefore) pairUp(m, l);
  const unsure = new Set<string>();
  const matchedLines = new Set<string>();
  for (const item of items) {
    const movesOf = item.category === 'batch' ? item.movements!.map((x) => x.ledger_entry_id) : item.ledger_entry_id ? [item.ledger_entry_id] : [];
    for (const m of movesOf) count(seenMoves, m);
    // A batch's movements are matched in one item each, all naming its line: the line counts once.
    if (item.statement_line_id) {
      if (item.category !== 'matched') count(seenLines, item.statement_line_id);
      else if (!matchedLines.has(item.statement_line_id)) { matchedLines.add(item.statement_line_id); count(seenLines, item.statement_line_id); }
    }
    if ((item.category === 'matched' || item.category === 'mismatched') && item.ledger_entry_id !== null && item.statement_line_id !== null) {
      if (!owns(item.statement_line_id!, item.ledger_entry_id!)) wrong.push(`false ${item.category}: ${item.ledger_entry_id} with ${item.statement_line_id} (${item.reason})`);
      pairUp(item.ledger_entry_id!, item.statement_line_id!);
    }
    if (item.category === 'batch') {
      for (const m of movesOf) {
        if (!owns(item.statement_line_id!, m)) wrong.push(`false batch member: ${m} in ${item.statement_line_id}`);
        pairUp(m, item.statement_line_id!);
      }
    }
    if (item.category === 'ambiguous' || item.reason === 'not_examined') {
      for (const side of [item.ledger_entry_id, item.statement_line_id, ...(item.candidates ?? []).flatMap((c) => [c.ledger_entry_id, c.statement_line_id])]) if (side) unsure.add(side);
    }
  }
  // Every side of the days reported in exactly one item; none in two.
  for (const m of day.movements) {
    const seen = seenMoves.get(m.entryId) ?? 0;
    if (seen > 1 || (seen === 0 && inRange(m.date) && !facts.bookBefore.has(m.entryId))) wrong.push(`movement ${m.entryId} of ${m.date} in ${seen} items`);
  }
  const bookLines = new Set(facts.bookBefore.values());
  for (const l of day.lines) {
    const seen = seenLines.get(l.lineId) ?? 0;
    if (seen > 1 || (seen === 0 && inRange(l.valueDate) && !bookLines.has(l.lineId))) wrong.push(`line ${l.lineId} of ${l.valueDate} in ${seen} items`);
  }
  // An unmatched item sure of itself carries exactly the difference: its sides are what it says.
  for (const item of items) {
    if (item.category === 'matched' || unsure.has(item.ledger_entry_id ?? '') || unsure.has(item.statement_line_id ?? '')) continue;
    if (item.category === 'ledger_only') {
      const owning = day.lines.filter((l) => owns(l.lineId, item.ledger_entry_id!) && !bookLines.has(l.lineId));
      if (owning.length > 0) wrong.push(`ledger_only ${item.ledger_entry_id}, whose line ${owning[0].lineId} is there`);
    }
    if (item.category === 'statement_only') {
      const moves = [...(day.owner.get(item.statement_line_id!) ?? [])].filter((m) => movement.has(m));
      // Its movements are paired with another line of theirs, or have one (the partner counted them twice: either line is the extra one).
      const elsewhere = moves.every((m) => [...(pairedLinesOf.get(m) ?? [])].some((other) => other !== item.statement_line_id && owns(other, m))
        || day.lines.some((other) => other.lineId !== item.statement_line_id && owns(other.lineId, m)));
      if (!elsewhere) wrong.push(`statement_only ${item.statement_line_id}, whose movements ${moves.join(' ')} are not paired elsewhere`);
    }
    if (item.category === 'batch') {
      const present = [...day.owner.get(item.statement_line_id!)!].filter((m) => movement.has(m));
      if (present.length !== item.movements!.length) wrong.push(`batch ${item.statement_line_id} lists ${item.movements!.length} of its ${present.length} movements`);
    }
  }
  // A match (a pair, or a batch's movements naming its line) is off by the tolerance at most, in
  // one currency: what it leaves between the books is what finance agreed to let pass.
  const matchedMoves = new Map<string, string[]>();
  const matchTo = (l: string, m: string) => (matchedMoves.get(l) ?? matchedMoves.set(l, []).get(l)!).push(m);
  for (const i of items.filter((x) => x.category === 'matched')) matchTo(i.statement_line_id!, i.ledger_entry_id!);
  // A line some of whose movements an earlier run matched: those count too (a run reports a match once).
  for (const [m, l] of facts.bookBefore) if (matchedMoves.has(l) && !matchedMoves.get(l)!.includes(m)) matchTo(l, m);
  for (const [l, moves] of matchedMoves) {
    const gap = moves.reduce((sum, m) => sum.minus(movement.get(m)!.amount), line.get(l)!.net);
    const currencies = new Set([line.get(l)!.currency, ...moves.map((m) => movement.get(m)!.currency)]);
    if (gap.abs().isGreaterThan(rules.amountTolerance) || currencies.size > 1) wrong.push(`matched ${l} with ${moves.join(' ')}: off by ${gap.toFixed(2)} in ${[...currencies].join(', ')}, beyond the tolerance of ${rules.amountTolerance.toFixed(2)}`);
  }
  // And a pair that differs by the tolerance at most is no mismatch of amounts.
  for (const i of items.filter((x) => x.category === 'mismatched' && x.field === 'amount')) {
    const gap = line.get(i.statement_line_id!)!.net.minus(movement.get(i.ledger_entry_id!)!.amount);
    if (gap.abs().isLessThanOrEqualTo(rules.amountTolerance)) wrong.push(`mismatched ${i.statement_line_id} with ${i.ledger_entry_id}: off by ${gap.toFixed(2)}, within the tolerance of ${rules.amountTolerance.toFixed(2)}`);
  }
  // The adjustments bring the sides to balance: statement − ledger over the unmatched items is
  // statement − ledger over the sides they name (what the matches leave is within the tolerance).
  // In each currency apart: an amount in one currency never makes up for one in another.
  const unmatched = items.filter((i) => i.category !== 'matched');
  const adjustments = new Totals();
  const sides = new Totals();
  for (const i of unmatched) {
    adjustments.add(i.currency, amountOf(i.statement_amount).minus(amountOf(i.ledger_amount)));
    if (i.statement_line_id) sides.add(line.get(i.statement_line_id)!.currency, line.get(i.statement_line_id)!.net);
    const moves = i.category === 'batch' ? i.movements!.map((x) => x.ledger_entry_id) : i.ledger_entry_id ? [i.ledger_entry_id] : [];
    for (const m of moves) sides.add(movement.get(m)!.currency, movement.get(m)!.amount.negated());
  }
  for (const c of Totals.currencies(adjustments, sides)) {
    if (!adjustments.of(c).isEqualTo(sides.of(c))) wrong.push(`adjustments ${adjustments.of(c).toFixed(2)} ${c} but the sides differ by ${sides.of(c).toFixed(2)} ${c}`);
  }
  return wrong;
}
