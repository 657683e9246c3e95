// The two forms dates take on the query and in bodies, and the routes that take either: a
// calendar date (YYYY-MM-DD) or an ISO 8601 instant (2026-11-24T10:00:00Z). A route about days
// (a reconciliation) takes an instant as its UTC day; a route about instants (a statement, the
// journal) takes a calendar date as its start, 00:00 UTC. Both are said in the document.
import { isCalendarDate } from '../finance/formats';
import { DomainError } from '../errors';


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

/** The UTC day (YYYY-MM-DD) a value of dayOrInstant names. */
export function utcDayOf(text: string, field: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    if (!isCalendarDate(text)) throw new DomainError('invalid_request', `${field} is not a calendar date (YYYY-MM-DD): ${text}`, field);
    return text;
  }
  return new Date(text).toISOString().slice(0, 10);
}

/** The instant a value of instantOrDay names. */
export function instantOf(text: string, field: string): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    if (!isCalendarDate(text)) throw new DomainError('invalid_request', `${field} is not a calendar date (YYYY-MM-DD): ${text}`, field);
    return new Date(`${text}T00:00:00Z`);
  }
  return new Date(text);
}
