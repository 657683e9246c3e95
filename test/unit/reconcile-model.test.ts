// A model-based test of matching (issue 39): stretches of generated days, each reconciled by
// several runs over overlapping days that share the table of matches, checked against the
// oracle of test/support/reconcile-model.ts: no false match ever, every side in exactly one item,
// each sure exception carrying exactly its difference, the open exceptions balancing the books.
// Each seed of support/seeds.ts reconciles its share of RECONCILE_MODEL_DAYS (10,000 by default) in
// stretches seeded seed, seed + 1, ...; a failure names the stretch's seed, and TEST_SEED with
// RECONCILE_MODEL_DAYS=1 replays that stretch alone.
import assert from 'node:assert/strict';
import { reconcileRun, type MatchBook } from '../../src/reconciliation/match-in-memory';
import { checkRun, dayAtRun, daySeenAfter, generateDays } from '../support/reconcile-model';
import { ExceptionQueue } from '../support/reconcile-queue';
import { replayOf, seeds } from '../support/seeds';

const DAYS = Number(process.env.RECONCILE_MODEL_DAYS ?? 10_000);
// Far apart: a seed's stretches are seeded seed, seed + 1, ...
const SEEDS = seeds([1, 500_000_000]);

describe('reconciliation matching against a model of the truth', function () {
  this.timeout(120_000);

  for (const first of SEEDS) {
    const days = Math.ceil(DAYS / SEEDS.length);
    it(`never matches falsely and leaves every difference in exactly one exception, over ${days} generated days (${replayOf(first)})`, () => {
      const started = Date.now();
      const seen = { days: 0, runs: 0, matched: 0, ambiguous: 0, batch: 0, exceptions: 0 };
      for (let stretch = 0; seen.days < days; stretch += 1) {
        const seed = first + stretch;
        const day = generateDays(seed);
        const book: MatchBook = { movements: new Map(), lines: new Set() };
        const queue = new ExceptionQueue();
        let seenByQueue = dayAtRun(day, 0);
        const replay = `seed ${seed} (replay it alone: ${replayOf(seed)} RECONCILE_MODEL_DAYS=1)`;
        for (const [run, rules] of day.runs.entries()) {
          const bookBefore = new Map(book.movements);
          const statement = dayAtRun(day, run);
          const report = reconcileRun(day.movements, statement.lines, rules, book);
          const wrong = checkRun(statement, rules, report.items, { bookBefore });
          assert.deepEqual(wrong, [], `${replay}, run of ${rules.from} to ${rules.to}`);
          queue.record(report.items);
          seenByQueue = daySeenAfter(day, seenByQueue, run, report.items);
          seen.runs += 1;
          seen.matched += report.summary.matched;
          seen.ambiguous += report.summary.ambiguous;
          seen.batch += report.summary.batch;
        }
        // Only the days some run covered must be whole (the runs' days may leave gaps).
        const covered = (date: string) => day.runs.some((r) => date >= r.from && date <= r.to);
        assert.deepEqual(queue.check(seenByQueue, covered, book), [], `${replay}, the exceptions after ${day.runs.length} runs`);
        seen.exceptions += queue.open.size;
        seen.days += day.days;
      }
      console.log(`      ${JSON.stringify(seen)} in ${Date.now() - started} ms`);
      assert.ok(seen.ambiguous > 0 && seen.batch > 0 && seen.matched > 0, `${replayOf(first)}: the days generated reach every kind`);
    });
  }
});
