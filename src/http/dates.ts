// The two forms dates take on the query and in bodies, and one meaning of `from`/`to` on every
// route (WINDOW_MEANING, said once here and in the README): a calendar date (YYYY-MM-DD) is a
// whole UTC day, so in `to` it includes that day; an ISO 8601 instant is exact. A route about
// days (a reconciliation) covers whole UTC days: an instant names its UTC day. A route about
// instants (a statement, the journal, the exceptions queue) starts at `from` (a date: its 00:00
// UTC) and ends before `to` (a date: the next day's 00:00 UTC, so that day is in; an instant: that
// instant, exclusive).
import { DomainError } from '../domain-error';


export const WINDOW_MEANING = 'a calendar date (YYYY-MM-DD) is a whole UTC day: in from the window starts at its 00:00 UTC, in to the window includes that day; '
  + 'an ISO 8601 instant is exact (from inclusive, to exclusive)';

/** A day: a calendar date, or an instant taken as its UTC day. */
export const dayOrInstant = (description: string) => ({
  type: 'string', anyOf: [{ format: 'date' }, { format: 'date-time' }],
  description: `${description}: a calendar date (YYYY-MM-DD), or an ISO 8601 instant taken as its UTC day`, examples: ['2026-11-24', '2026-11-24T09:30:00Z'],
} as const);

/**
 * An instant: an ISO 8601 instant, or a calendar date taken as its start, 00:00 UTC. The start of
 * a window gives examples of the day before its end's, so examples taken together make a window.
 */
export const instantOrDay = (description: string, exampleDay: '2026-11-23' | '2026-11-24' = '2026-11-24') => ({
  type: 'string', anyOf: [{ format: 'date-time' }, { format: 'date' }],
  description: `${description}: an ISO 8601 instant, or a calendar date (YYYY-MM-DD) taken as its start, 00:00 UTC`, examples: [`${exampleDay}T09:30:00Z`, exampleDay],
} as const);

/** The `from` or `to` of a window of instants, described with the one meaning of every route. */
export const windowBound = (bound: 'from' | 'to', description: string) => ({
  type: 'string', anyOf: [{ format: 'date-time' }, { format: 'date' }],
  description: `${description}; ${WINDOW_MEANING}`,
  examples: bound === 'from' ? ['2026-11-23', '2026-11-23T09:30:00Z'] : ['2026-11-24', '2026-11-24T09:30:00Z'],
} as const);

/** The UTC day (YYYY-MM-DD) a value of dayOrInstant names. */
export function utcDayOf(text: string, field: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    if (!isCalendarDate(text)) throw new DomainError('invalid_request', `${field} is not a calendar date (YYYY-MM-DD): ${text}`, field);
    return text;
  }
  return new Date(text).toISOString().slice(0, 10);
}

/** The instant a value of instantOrDay names; the start of a window (`from`). */
export function instantOf(text: string, field: string): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    if (!isCalendarDate(text)) throw new DomainError('invalid_request', `${field} is not a calendar date (YYYY-MM-DD): ${text}`, field);
    return new Date(`${text}T00:00:00Z`);
  }
  return new Date(text);
}

/** The exclusive end of a window a `to` names: a calendar date includes its day, so the next day's 00:00 UTC; an instant itself. */
export function windowEndOf(text: string, field: string): Date {
  const at = instantOf(text, field);
  return /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(at.getTime() + 86_400_000) : at;
}

/**
 * The window a list's `from`/`to` name, either or both absent: `from` inclusive, `to` exclusive (a
 * date in `to` includes its day), and `from` before `to`, as a statement's window must be.
 * @throws DomainError invalid_request naming from or to
 */
export function windowOf(query: { from?: string; to?: string }): { from?: Date; to?: Date } {
  const from = query.from === undefined ? undefined : instantOf(query.from, 'from');
  const to = query.to === undefined ? undefined : windowEndOf(query.to, 'to');
  if (from && to && from.getTime() >= to.getTime()) throw new DomainError('invalid_request', 'from must be before to', 'from');
  return { from, to };
}

/** Whether `text` is a real calendar date written YYYY-MM-DD (2026-02-30 is not). */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}
