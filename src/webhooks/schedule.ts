// When a failed delivery is tried again: after each failed attempt the next step of the schedule
// (config.ts: DESIGN.md section 5d's 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), and past its end
// the delivery is failed (a retry or a recovery can send it again). A receiver's Retry-After, in
// seconds or as an HTTP date, replaces the step it falls on, within 1 s and 10 h.
import { parseRetryAfterMs } from '../retry-after';

const RETRY_AFTER_MIN_MS = 1_000;
const RETRY_AFTER_MAX_MS = 36_000_000;

/** A Retry-After header's wait in ms, within 1 s and 10 h, or null when there is none or it makes no sense. */
export function retryAfterMs(header: string | undefined, now: Date): number | null {
  const ms = parseRetryAfterMs(header, now.getTime());
  return ms === null ? null : Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, ms));
}

/** The wait after failed attempt number `attempt` (1-based), or null when none is left. */
export function retryDelayMs(attempt: number, schedule: readonly number[], retryAfter: number | null): number | null {
  if (attempt > schedule.length) return null;
  return retryAfter ?? schedule[attempt - 1];
}
