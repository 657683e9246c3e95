// The movements a batch line without settlement detail may settle: sets of them whose amounts add
// up to the line. A match must be the only explanation of the line, so the search looks for a
// second set rather than stopping at the first; it is exponential, so it is bounded (at most
// SUBSET_CANDIDATES_MAX movements, at most SEARCH_STEPS_MAX sets tried per line, and the run's
// budget), and a search cut short says so: the caller reports the line `not_examined`, never
// matched and never silently alone.
// Amounts are bigints of the currency's minor unit: exact, and far cheaper than decimals.

export const SUBSET_CANDIDATES_MAX = 60;
export const SEARCH_STEPS_MAX = 200_000;

export interface SubsetSearch<T> {
  /** Up to `wanted` distinct sets of at least two candidates adding up to the target. */
  found: T[][];
  /** False when a bound cut the search short: more sets may exist. */
  complete: boolean;
  /** Steps spent, charged to the run's budget. */
  steps: number;
}

/**
 * Sets of at least two of `candidates` (all of one sign, as the caller picks them) whose units
 * add up to `target` within `tolerance`, stopping at `wanted` sets; `stepsLeft` bounds the work.
 */
const abs = (n: bigint) => (n < 0n ? -n : n);

export function subsetsAddingUpTo<T>(candidates: T[], unitsOf: (c: T) => bigint, target: bigint, tolerance: bigint, wanted: number, stepsLeft: number): SubsetSearch<T> {
  if (wanted <= 0 || candidates.length < 2) return { found: [], complete: true, steps: 0 };
  if (candidates.length > SUBSET_CANDIDATES_MAX) return { found: [], complete: false, steps: 0 };
  // Largest first, so the remaining sum bounds what a branch can still reach.
  const items = [...candidates].sort((a, b) => { const d = abs(unitsOf(b)) - abs(unitsOf(a)); return d > 0n ? 1 : d < 0n ? -1 : 0; });
  const units = items.map((c) => abs(unitsOf(c)));
  const goal = abs(target);
  const suffix: bigint[] = new Array(items.length + 1).fill(0n);
  for (let i = items.length - 1; i >= 0; i -= 1) suffix[i] = suffix[i + 1] + units[i];
  const limit = Math.min(SEARCH_STEPS_MAX, stepsLeft);
  const found: T[][] = [];
  const chosen: number[] = [];
  let steps = 0;
  let cut = false;
  const search = (start: number, sum: bigint): void => {
    if (found.length >= wanted || cut) return;
    if (chosen.length >= 2 && abs(sum - goal) <= tolerance) { const set = new Set(chosen.map((i) => items[i])); found.push(candidates.filter((c) => set.has(c))); }
    for (let i = start; i < items.length; i += 1) {
      if (found.length >= wanted) return;
      steps += 1;
      if (steps > limit) { cut = true; return; }
      // Even everything left cannot reach the goal: no later start can either.
      if (sum + suffix[i] < goal - tolerance) return;
      const next = sum + units[i];
      if (next > goal + tolerance) continue;
      chosen.push(i);
      search(i + 1, next);
      chosen.pop();
      if (cut) return;
    }
  };
  search(0, 0n);
  return { found, complete: !cut || found.length >= wanted, steps };
}
