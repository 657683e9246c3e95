// The Retry-After header (RFC 9110 section 10.2.3), as both the partner client and the webhook
// dispatcher read it from the servers they call.
import { wallNowMs } from './clock';

/** Retry-After in milliseconds (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function parseRetryAfterMs(header: string | null | undefined, nowMs: number = wallNowMs()): number | null {
  if (header === null || header === undefined || header.trim() === '') return null;
  if (/^\d+$/.test(header.trim())) return Number.parseInt(header.trim(), 10) * 1000;
  const atMs = Date.parse(header);
  return Number.isNaN(atMs) ? null : Math.max(0, atMs - nowMs);
}
