// Calendar days as the API reads and writes them: YYYY-MM-DD, in UTC.

const DAY_MS = 86_400_000;

/** Today in UTC. */
export const today = (): string => new Date().toISOString().slice(0, 10);

/** The day `days` after `day` (before it when negative). */
export const daysAfter = (day: string, days: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
