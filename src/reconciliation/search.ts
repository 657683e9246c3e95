// The searching pass of matching (match.ts, pass 3): for what the certain passes left, pairs a
// line with one movement of its amount (its net; a line with a fee is also explained by a movement
// of its gross, which leaves it unsure, below) and date, or a batch line without detail with a set of
// movements adding up to it, only where a side carries no reference (references that differ
// never pair) and only when that is the ONE explanation: of the line (no second movement, no
// second set) and of every movement in it (no other line claims it). Anything less certain is
// `ambiguous`, naming the candidates; a line the budget did not reach, or whose search a bound
// cut short, is `not_examined`, and nothing its movements might explain is matched.
import { CURRENCY_SCALE, Money, type Currency } from '../../ledger/money';
import { subsetsAddingUpTo } from './batch-subsets';
import { format, MATCHED_BY, NOT_EXAMINED, REASONS, type Candidate, type LedgerMovement, type Matcher, type StatementEntry } from './match';
import { wallNowMs } from '../clock';

/** What one run may spend searching: steps of the subset search, and a wall-clock deadline (epoch ms). */
export interface SearchBudget { steps: number; deadline: number }

/** A line's explanations and the movements they use; `grossOnly`: its one explanation is a movement of its gross (see below). */
interface Examined { line: StatementEntry; explanations: LedgerMovement[][]; members: LedgerMovement[]; grossOnly: boolean }

/** Sets looked for to name every candidate of an ambiguous line; past it, every movement that might be in one is named. */
const CANDIDATE_SETS_MAX = 64;

/** An amount in minor units, exact; null when it has more decimals than its currency. */
function unitsOf(amount: LedgerMovement['amount'], currency: Currency): bigint | null {
  const units = amount.shiftedBy(CURRENCY_SCALE[currency]);
  return units.isInteger() ? BigInt(units.toFixed(0)) : null;
}
const abs = (n: bigint) => (n < 0n ? -n : n);

const compatible = (m: LedgerMovement, line: StatementEntry) => m.reference === null || line.reference === null;

export function searchPass(matcher: Matcher, movements: LedgerMovement[], lines: StatementEntry[], budget: SearchBudget): void {
  const open = movements.filter((m) => !matcher.movementUsed.has(m));
  const units = new Map<LedgerMovement, bigint | null>(open.map((m) => [m, unitsOf(m.amount, m.currency)]));
  const tolerance = (currency: Currency) => BigInt(matcher.rules.amountTolerance.shiftedBy(CURRENCY_SCALE[currency]).integerValue(1).toFixed(0)); // rounded down
  const examined: Examined[] = [];
  const unreached: StatementEntry[] = [];
  let steps = 0;
  for (const line of lines) {
    if (matcher.lineUsed.has(line)) continue;
    const near = open.filter((m) => m.currency === line.currency && compatible(m, line) && matcher.closeDate(m.date, line.valueDate));
    if (near.length === 0) continue;
    const target = unitsOf(line.net, line.currency);
    if (target === null || near.some((m) => units.get(m) === null) || steps >= budget.steps || wallNowMs() >= budget.deadline) {
      unreached.push(line);
      continue;
    }
    const tol = tolerance(line.currency);
    const ones = near.filter((m) => abs(units.get(m)! - target) <= tol);
    // A line with a fee is also explained by a movement of its gross (the partner took a fee the
    // ledger does not have): weighed with the others, so a net that another payment happens to
    // have is never taken for the line's. Alone it pairs nothing: such a pair would be an
    // exception (`mismatched` on fee) that no table of matches keeps, so a later run over other
    // days could see it otherwise. The line is `ambiguous`, naming that movement, for a person.
    const gross = line.fee.isZero() ? null : unitsOf(line.amount, line.currency);
    const grossOnes = gross === null ? [] : near.filter((m) => !ones.includes(m) && abs(units.get(m)! - gross) <= tol);
    const sameSign = near.filter((m) => (units.get(m)! < 0n) === (target < 0n) && abs(units.get(m)!) <= abs(target) + tol);
    const sets = subsetsAddingUpTo(sameSign, (m) => units.get(m)!, target, tol, Math.max(0, 2 - ones.length - grossOnes.length), budget.steps - steps);
    steps += sets.steps;
    const explanations = [...ones.map((m) => [m]), ...grossOnes.map((m) => [m]), ...sets.found];
    if (explanations.length < 2 && !sets.complete) {
      unreached.push(line);
      continue;
    }
    if (explanations.length === 0) continue;
    // Unsure: every movement some explanation of the line could use is its candidate, and claimed
    // by it (so no other line is matched with it as though it were free).
    let members = explanations.flat();
    if (explanations.length > 1) {
      const every = subsetsAddingUpTo(sameSign, (m) => units.get(m)!, target, tol, CANDIDATE_SETS_MAX, Math.max(0, budget.steps - steps));
      steps += every.steps;
      members = every.complete && every.found.length < CANDIDATE_SETS_MAX ? [...ones, ...grossOnes, ...every.found.flat()] : [...ones, ...grossOnes, ...sameSign];
    }
    examined.push({ line, explanations, members: [...new Set(members)], grossOnly: explanations.length === 1 && grossOnes.length === 1 });
  }

  // Every line that might explain a movement: those examined, and those the search did not finish.
  const claims = new Map<LedgerMovement, Set<StatementEntry>>();
  const claim = (m: LedgerMovement, line: StatementEntry) => (claims.get(m) ?? claims.set(m, new Set()).get(m)!).add(line);
  for (const { line, members } of examined) for (const m of members) claim(m, line);
  // A great many unreached lines (the deadline passed early): every movement of their currencies may be theirs.
  const wholesale = unreached.length * open.length > 5_000_000 ? new Set(unreached.map((l) => l.currency)) : null;
  const contested = (m: LedgerMovement) => (wholesale?.has(m.currency) ?? false) || claims.get(m)!.size > 1;
  // Movements a line the search did not examine may settle: none of them is reported as sure.
  const unexamined = new Set<LedgerMovement>();
  const unreachedLines = new Set(unreached);
  for (const line of wholesale ? [] : unreached) {
    for (const m of open) {
      if (m.currency === line.currency && compatible(m, line) && matcher.closeDate(m.date, line.valueDate) && m.amount.isNegative() === line.net.isNegative()
        && m.amount.abs().isLessThanOrEqualTo(Money.max(line.net.abs(), line.amount.abs()).plus(matcher.rules.amountTolerance))) {
        claim(m, line);
        unexamined.add(m);
      }
    }
  }

  const unsure: Examined[] = [];
  for (const entry of examined) {
    const [only] = entry.explanations;
    if (entry.explanations.length === 1 && !entry.grossOnly && !only.some(contested)) {
      if (only.length === 1) {
        matcher.pair(only[0], entry.line, MATCHED_BY.amountAndDate);
      } else {
        matcher.lineUsed.add(entry.line);
        for (const m of only) {
          matcher.movementUsed.add(m);
          matcher.add(m, entry.line, { category: 'matched', field: null, ledger_value: null, statement_value: null, reason: MATCHED_BY.subset },
            matcher.inRange(entry.line.valueDate) || only.some((x) => matcher.inRange(x.date)));
        }
      }
    } else {
      unsure.push(entry);
    }
  }
  for (const line of unreached) {
    matcher.lineUsed.add(line);
    matcher.notExamined += 1;
    matcher.add(null, line, { category: 'statement_only', field: null, ledger_value: null, statement_value: null, reason: NOT_EXAMINED });
  }
  // The side without a reference is the unsure one: a line lists its candidate movements; a
  // movement without one that several lines claim lists those lines (so a line with a reference
  // whose only movement is contested is named as a candidate, never left looking sure).
  const candidateOfMovement = (m: LedgerMovement): Candidate => ({ ledger_entry_id: m.entryId, statement_line_id: null, reference: m.reference, amount: format(m.amount, m.currency), value_date: m.date });
  const candidateOfLine = (l: StatementEntry): Candidate => ({ ledger_entry_id: null, statement_line_id: l.lineId, reference: l.reference, amount: format(l.net, l.currency), value_date: l.valueDate });
  for (const { line, explanations, members } of unsure) {
    if (line.reference !== null && explanations.length < 2) continue;
    const movementsOf = members.filter((m) => !matcher.movementUsed.has(m));
    matcher.lineUsed.add(line);
    matcher.add(null, line, {
      category: 'ambiguous', field: null, ledger_value: null, statement_value: null, reason: REASONS.ambiguousLine(movementsOf.length), candidates: movementsOf.map(candidateOfMovement),
    }, matcher.inRange(line.valueDate) || movementsOf.some((m) => matcher.inRange(m.date))); // a candidate reported alone is unsure too: say so
  }
  // A movement several lines without reference fit is unsure; so is one, with a reference or
  // without, that a line the search did not examine may settle (reported alone it would look sure,
  // and finance could adjust it while its line is there).
  for (const [m, by] of claims) {
    if (matcher.movementUsed.has(m) || (!unexamined.has(m) && (m.reference !== null || by.size < 2))) continue;
    matcher.movementUsed.add(m);
    const reason = unexamined.has(m) ? REASONS.unexaminedMayExplain(by.size) : REASONS.ambiguousMovement(by.size);
    // Lines not examined can be thousands (a search cut short): every line examined is named, then
    // the first of the others; the reason counts them all.
    const examinedFirst = [...by].filter((l) => !unreachedLines.has(l));
    const named = unexamined.has(m) ? [...examinedFirst, ...[...by].filter((l) => unreachedLines.has(l)).slice(0, CANDIDATE_SETS_MAX)] : [...by];
    matcher.add(m, null, {
      category: 'ambiguous', field: null, ledger_value: null, statement_value: null, reason, candidates: named.map(candidateOfLine),
    }, matcher.inRange(m.date) || [...by].some((l) => matcher.inRange(l.valueDate)));
  }
}
