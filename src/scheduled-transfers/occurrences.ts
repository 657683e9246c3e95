// When each occurrence of a schedule falls due (DESIGN.md section 5i): the first at run_at, then
// one step apart. A day is 24 hours and a week seven days (UTC has no daylight saving to skip). A
// month is the same day of the month at the same time of day, in UTC, clamped to the month's last
// day when it has fewer days: Jan 31 → Feb 28 (29 in a leap year) → Mar 31. Every occurrence is
// computed from run_at, not from the occurrence before it, so one short month does not pull every
// later run to the 28th.

export const REPEAT_EVERY = ['day', 'week', 'month'] as const;
export type RepeatEvery = (typeof REPEAT_EVERY)[number];

/** The most runs a schedule makes in all (DESIGN.md section 5i). */
export const RUNS_MAX = 120;

export const DAY_MS = 86_400_000;

/** The days of a month (month 0..11; Date.UTC carries a month past 11 into the next year). */
const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

/** run_at moved `months` calendar months on, its day clamped to the target month's last. */
function monthsAfter(runAt: Date, months: number): Date {
  const target = new Date(Date.UTC(runAt.getUTCFullYear(), runAt.getUTCMonth() + months, 1));
  const day = Math.min(runAt.getUTCDate(), daysInMonth(target.getUTCFullYear(), target.getUTCMonth()));
  target.setUTCDate(day);
  target.setUTCHours(runAt.getUTCHours(), runAt.getUTCMinutes(), runAt.getUTCSeconds(), runAt.getUTCMilliseconds());
  return target;
}

/**
 * When occurrence `occurrence` (1 is run_at itself) of a schedule falls due. `dayMs` is the length
 * of a day step: a day, except in a sandbox whose tests shorten it (SCHEDULED_TRANSFER_DAY_MS).
 */
export function occurrenceAt(runAt: Date, every: RepeatEvery | null, occurrence: number, dayMs = DAY_MS): Date {
  const steps = occurrence - 1;
  if (steps === 0 || every === null) return runAt;
  if (every === 'month') return monthsAfter(runAt, steps);
  return new Date(runAt.getTime() + steps * (every === 'week' ? 7 : 1) * dayMs);
}
