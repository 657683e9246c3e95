// The movements a batch line without settlement detail settles: a set of them whose amounts add up
// to the line. A search over subsets is exponential, so it is bounded: at most BATCH_CANDIDATES_MAX
// movements are considered and at most SEARCH_STEPS_MAX sets tried; a line it cannot settle within
// those bounds stays `statement_only`, for a person to match by hand.
import { Money, type Amount } from '../../ledger/money';

export const BATCH_CANDIDATES_MAX = 40;
export const SEARCH_STEPS_MAX = 200_000;

/**
 * The smallest set of at least two movements whose amounts add up to `target` within `tolerance`
 * (all of one sign, as the caller picks them), or null when none is found within the bounds.
 */
export function subsetAddingUpTo<T extends { amount: Amount }>(candidates: T[], target: Amount, tolerance: Amount): T[] | null {
  if (candidates.length < 2 || candidates.length > BATCH_CANDIDATES_MAX) return null;
  // Largest first, so the remaining sum bounds what a branch can still reach.
  const items = [...candidates].sort((a, b) => b.amount.abs().comparedTo(a.amount.abs()) ?? 0);
  const goal = target.abs();
  const suffix: Amount[] = new Array(items.length + 1);
  suffix[items.length] = new Money(0);
  for (let i = items.length - 1; i >= 0; i -= 1) suffix[i] = suffix[i + 1].plus(items[i].amount.abs());
  let steps = 0;
  // Sets of size 2, then 3, ...: the first found is the smallest.
  for (let size = 2; size <= items.length; size += 1) {
    const chosen: number[] = [];
    const search = (start: number, sum: Amount): boolean => {
      steps += 1;
      if (steps > SEARCH_STEPS_MAX) return false;
      if (chosen.length === size) return sum.minus(goal).abs().isLessThanOrEqualTo(tolerance);
      for (let i = start; i <= items.length - (size - chosen.length); i += 1) {
        const next = sum.plus(items[i].amount.abs());
        if (next.isGreaterThan(goal.plus(tolerance))) continue;
        // Even everything left cannot reach the goal: no later start can either.
        if (sum.plus(suffix[i]).isLessThan(goal.minus(tolerance))) return false;
        chosen.push(i);
        if (search(i + 1, next)) return true;
        chosen.pop();
        if (steps > SEARCH_STEPS_MAX) return false;
      }
      return false;
    };
    if (search(0, new Money(0))) {
      const found = new Set(chosen.map((i) => items[i]));
      return candidates.filter((c) => found.has(c));
    }
    if (steps > SEARCH_STEPS_MAX) return null;
  }
  return null;
}
