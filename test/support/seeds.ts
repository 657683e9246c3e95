// The seeds of a randomized test file: a fixed list, the same every run so CI replays them, and
// one drawn afresh each run, so runs keep reaching new cases (in the system suite: seededCases). TEST_SEED=n runs seed n alone. A
// seeded case names its seed in its title and in its failures (`replayOf`), so that
// `TEST_SEED=n npm test -- dist/test/<file>.js` replays it.
import { randomInt } from 'node:crypto';

export function seeds(fixed: readonly number[]): number[] {
  const chosen = process.env.TEST_SEED;
  if (chosen !== undefined && chosen !== '') {
    if (!/^\d+$/.test(chosen)) throw new Error(`TEST_SEED must be a non-negative integer, got "${chosen}"`);
    return [Number(chosen)];
  }
  return [...fixed, randomInt(2 ** 31)];
}

/**
 * The fixed seeds alone (TEST_SEED=n: seed n alone), for a file whose fresh seeds run in the system
 * suite at a larger scale: npm test replays the same cases every run.
 */
export function fixedSeeds(fixed: readonly number[]): number[] {
  const all = seeds(fixed);
  return process.env.TEST_SEED ? all : all.slice(0, fixed.length);
}

/**
 * The cases of a randomized file of the integration suite: its fixed seeds in npm test, and one
 * drawn afresh each run in the system suite (its title ends in `tag`, @system), which CI runs as
 * well. TEST_SEED=n: seed n alone, untagged.
 */
export function seededCases(fixed: readonly number[]): Array<{ seed: number; tag: string }> {
  return seeds(fixed).map((seed, i) => ({ seed, tag: i < fixed.length || process.env.TEST_SEED ? '' : ' @system' }));
}

/** How a failure of `seed` is replayed, for a test title or an assertion message. */
export const replayOf = (seed: number): string => `TEST_SEED=${seed}`;

/** Runs `work`, its failure prefixed with how to replay `seed`. */
export async function namingSeed<T>(seed: number, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Error) error.message = `${replayOf(seed)} replays this: ${error.message}`;
    throw error;
  }
}
