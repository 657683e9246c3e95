// A promise bounded in time, for calls to a dependency that may never answer.

/** The rejection of withTimeout when its time ran out first. */
export class TimedOut extends Error {}

/**
 * `promise`, or a TimedOut rejection with `message` once `ms` pass without it settling. The
 * promise itself runs on; a later rejection of it is handled here, so it is never unhandled.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new TimedOut(message)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
