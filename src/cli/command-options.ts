// What payctl's resource commands share: how their options become a query, a path segment and a
// body, and the help of every write's --idempotency-key.
import type { Command } from 'commander';
import type { Common } from './calls';

/** Reads a command's global options (--profile, --json). */
export type CommonOf = (command: Command) => Common;

export const KEY_HELP = 'the Idempotency-Key of the write (default: a new one, printed): repeat it to repeat the request, never doing it twice';

/** Commander's repeatable option: every value given, in order. */
export const collect = (value: string, all: string[]): string[] => [...all, value];

/** A path segment from the command line: an id as typed, never a path of its own. */
export const segment = (id: string): string => encodeURIComponent(id);

/** The query of a list: the options given, in order; none gives none. */
export function query(params: Record<string, string | undefined>): string {
  const given = Object.entries(params).filter((pair): pair is [string, string] => pair[1] !== undefined);
  return given.length === 0 ? '' : `?${new URLSearchParams(given).toString()}`;
}

/** A body without the options not given: the API applies its own defaults to what is absent. */
export function bodyOf(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
