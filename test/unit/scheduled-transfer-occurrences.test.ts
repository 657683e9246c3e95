// When a schedule's occurrences fall due (src/scheduled-transfers/occurrences.ts): the month step
// keeps run_at's day of the month, clamped to a shorter month's last day, each occurrence computed
// from run_at (Jan 31 → Feb 28/29 → Mar 31, not Mar 28); day and week steps are fixed lengths. The
// table first, then a seeded space of dates checked against a rule written here apart from the code.
import assert from 'node:assert/strict';
import { DAY_MS, occurrenceAt, RUNS_MAX } from '../../src/scheduled-transfers/occurrences';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seeds } from '../support/seeds';

const at = (text: string) => new Date(text);
const months = (runAt: string, count: number) => Array.from({ length: count }, (_, i) => occurrenceAt(at(runAt), 'month', i + 1).toISOString());

describe('scheduled transfer occurrences', () => {
  it('steps a month to the same day, clamped to a shorter month\'s last day, from run_at each time', () => {
    assert.deepEqual(months('2027-01-31T09:30:00.000Z', 4), ['2027-01-31T09:30:00.000Z', '2027-02-28T09:30:00.000Z', '2027-03-31T09:30:00.000Z', '2027-04-30T09:30:00.000Z']);
    assert.deepEqual(months('2028-01-31T00:00:00.000Z', 3), ['2028-01-31T00:00:00.000Z', '2028-02-29T00:00:00.000Z', '2028-03-31T00:00:00.000Z'], 'a leap year\'s February');
    assert.deepEqual(months('2027-03-30T23:59:59.999Z', 2), ['2027-03-30T23:59:59.999Z', '2027-04-30T23:59:59.999Z']);
    assert.deepEqual(months('2027-11-30T12:00:00.000Z', 4), ['2027-11-30T12:00:00.000Z', '2027-12-30T12:00:00.000Z', '2028-01-30T12:00:00.000Z', '2028-02-29T12:00:00.000Z'], 'across a year');
    assert.equal(occurrenceAt(at('2027-01-15T08:00:00.000Z'), 'month', RUNS_MAX).toISOString(), '2036-12-15T08:00:00.000Z', 'the last of 120 runs, ten years on');
  });

  it('steps a day or a week by its length, and a one-shot schedule has run_at alone', () => {
    const runAt = at('2027-03-27T22:00:00.000Z');
    assert.equal(occurrenceAt(runAt, 'day', 3).toISOString(), '2027-03-29T22:00:00.000Z', 'UTC has no clock change to skip');
    assert.equal(occurrenceAt(runAt, 'week', 2).toISOString(), '2027-04-03T22:00:00.000Z');
    assert.equal(occurrenceAt(runAt, 'day', 3, 1_000).toISOString(), '2027-03-27T22:00:02.000Z', 'a sandbox\'s shortened day');
    assert.equal(occurrenceAt(runAt, null, 1).toISOString(), runAt.toISOString());
  });

  for (const seed of seeds([1, 29, 31, 2028, 86_400])) {
    it(`keeps the month rule over a seeded space of dates and occurrences (${replayOf(seed)})`, () => namingSeed(seed, () => {
      const random = prng(seed);
      const daysIn = (year: number, month: number) => [31, year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month];
      for (let i = 0; i < 2_000; i++) {
        const year = 1970 + Math.floor(random() * 430);
        const month = Math.floor(random() * 12);
        const day = 1 + Math.floor(random() * daysIn(year, month));
        const timeMs = Math.floor(random() * DAY_MS);
        const runAt = new Date(Date.UTC(year, month, day) + timeMs);
        const occurrence = 1 + Math.floor(random() * RUNS_MAX);
        const got = occurrenceAt(runAt, 'month', occurrence);
        const target = year * 12 + month + occurrence - 1;
        const [targetYear, targetMonth] = [Math.floor(target / 12), target % 12];
        const context = `${runAt.toISOString()}, occurrence ${occurrence}: ${got.toISOString()}`;
        assert.deepEqual([got.getUTCFullYear(), got.getUTCMonth()], [targetYear, targetMonth], `${context}: the month ${occurrence - 1} on`);
        assert.equal(got.getUTCDate(), Math.min(day, daysIn(targetYear, targetMonth)), `${context}: run_at's day, or the month's last`);
        assert.equal(got.getTime() % DAY_MS, timeMs, `${context}: run_at's time of day`);
        const next = occurrenceAt(runAt, 'month', occurrence + 1);
        assert.ok(next.getTime() > got.getTime() && next.getTime() - got.getTime() <= 31 * DAY_MS, `${context}: the next within a month after`);
      }
    }));
  }
});
