// A client as SPEC.md section 7 tells it to behave: it repeats a write with the same
// Idempotency-Key after a network error, a 5xx or a 202 (after Retry-After), and never after a
// 400, 401, 403 or 409. Every request ends with a decision or, past its bound, as undecided.
import { randomUUID } from 'node:crypto';
import { sleep } from '../bench/harness';

export interface Decision { status: number; body: any; attempts: number }

const ATTEMPT_TIMEOUT_MS = 15_000;

export async function decide(baseUrl: string, token: string, path: string, body: unknown, deadlineMs: number, headers: Record<string, string> = {}, idempotencyKey = randomUUID()): Promise<Decision | null> {
  const deadline = Date.now() + deadlineMs;
  for (let attempts = 1; Date.now() < deadline; attempts++) {
    let wait = 500;
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        headers: { ...headers, authorization: `Bearer ${token}`, 'idempotency-key': idempotencyKey, 'content-type': 'application/json' },
      });
      const text = await response.text();
      if (response.status !== 202 && response.status < 500) return { status: response.status, body: text ? JSON.parse(text) : null, attempts };
      wait = 1_000 * Number.parseInt(response.headers.get('retry-after') ?? '1', 10);
    } catch { /* the network: the API restarting */ }
    await sleep(Math.min(wait, 2_000));
  }
  return null;
}
