// One request as a client sends it, and a write repeated as SPEC.md section 7 tells a client:
// the same Idempotency-Key after a timeout, a network error, a 5xx, a 429 or a 202 (after its
// Retry-After); a final answer is anything else. Every answer is checked as it arrives: no 5xx
// but a documented 503 with Retry-After, and every error body as section 7 gives it.
import { sleep } from '../bench/harness';
import type { Findings } from './findings';
import type { Latencies } from './latency';
import type { Trace } from './trace';

export interface Answer { status: number; body: any; retryAfter: string | null }
export type Sent = Answer | 'timeout' | 'network';

export interface RequestOptions { token?: string; key?: string; headers?: Record<string, string>; timeoutMs?: number }

const ATTEMPT_TIMEOUT_MS = 10_000;

export class Http {
  requests = 0;
  constructor(readonly baseUrl: string, private readonly findings: Findings, private readonly trace: Trace | null = null, private readonly latencies: Latencies | null = null) {}

  async send(client: number, method: string, path: string, body: unknown, options: RequestOptions = {}): Promise<Sent> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.key !== undefined) headers['idempotency-key'] = options.key;
    if (body !== undefined) headers['content-type'] = 'application/json';
    this.requests++;
    const seq = this.trace?.request(client, method, path, body, options.key, options.token, options.headers?.['Sandbox-Scenario'] ?? null) ?? 0;
    let response: Response;
    let text: string;
    const startedAt = Date.now();
    try {
      response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(options.timeoutMs ?? ATTEMPT_TIMEOUT_MS) });
      text = await response.text();
    } catch (error) {
      const failed = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network';
      this.latencies?.record(client, startedAt, Date.now() - startedAt);
      this.trace?.answer(seq, failed);
      return failed;
    }
    let parsed: any = text;
    try { parsed = text ? JSON.parse(text) : null; } catch { /* checked below */ }
    const answer: Answer = { status: response.status, body: parsed, retryAfter: response.headers.get('retry-after') };
    this.trace?.answer(seq, answer);
    this.latencies?.record(client, startedAt, Date.now() - startedAt);
    checkAnswer(this.findings, client, `${method} ${path}`, answer, options.headers?.['Sandbox-Scenario'] ?? null);
    return answer;
  }

  /** A read repeated, as a client would, after a 429, a 503 or no answer (after Retry-After); the last answer past `deadlineMs`. */
  async read(client: number, path: string, options: RequestOptions & { deadlineMs?: number } = {}): Promise<Answer | 'timeout' | 'network'> {
    const deadline = Date.now() + (options.deadlineMs ?? 60_000);
    for (;;) {
      const answer = await this.send(client, 'GET', path, undefined, options);
      const again = typeof answer === 'string' || answer.status === 429 || answer.status === 503;
      if (!again || Date.now() >= deadline) return answer;
      const wait = typeof answer === 'string' ? 500 : 1_000 * Number.parseFloat(answer.retryAfter ?? '0.5');
      await sleep(Math.min(Math.max(wait, 100), 2_000));
    }
  }

  /** A write (POST unless `method` says) repeated under one key until its answer is final; null past `deadlineMs`. */
  async decide(client: number, path: string, body: unknown, key: string, options: RequestOptions & { deadlineMs?: number; method?: string } = {}): Promise<Answer | null> {
    const deadline = Date.now() + (options.deadlineMs ?? 60_000);
    while (Date.now() < deadline) {
      const sent = await this.send(client, options.method ?? 'POST', path, body, { ...options, key });
      if (typeof sent !== 'string' && isFinal(sent)) return sent;
      const wait = typeof sent === 'string' ? 500 : 1_000 * Number.parseFloat(sent.retryAfter ?? '0.5');
      await sleep(Math.min(Math.max(wait, 100), 2_000));
    }
    return null;
  }
}

/**
 * 502 partner_error is final too: SPEC.md section 7 says the payment may or may not have been
 * made and tells the client to read it (its id is in `details`), not to send it again.
 */
export const isPartnerError = (answer: Answer): boolean => answer.status === 502 && answer.body?.error === 'partner_error';
export const isFinal = (answer: Answer): boolean => (answer.status !== 202 && answer.status !== 429 && answer.status < 500) || isPartnerError(answer);

/** The checks every answer must pass, whatever the request: the status and the error body. */
export function checkAnswer(findings: Findings, client: number, what: string, answer: Answer, scenario: string | null = null): void {
  // The one other 5xx SPEC.md documents: partner_error, when the request asked the rail to fail
  // (a 500, or an answer lost on the way back).
  if (answer.status >= 500 && !(scenario !== null && isPartnerError(answer))) {
    findings.expect(answer.status === 503 && answer.retryAfter !== null, 'no 5xx but documented 503s with Retry-After',
      () => `${what} answered ${answer.status} (Retry-After ${answer.retryAfter}): ${JSON.stringify(answer.body).slice(0, 300)}`, [client]);
  }
  if (answer.status >= 400) {
    findings.expect(errorBodyProblem(answer.body) === null, 'every error body as SPEC.md section 7 gives it',
      () => `${what} answered ${answer.status} with ${errorBodyProblem(answer.body)}: ${JSON.stringify(answer.body).slice(0, 300)}`, [client]);
  }
}

/** What is wrong with an error body, or null: success false, a code, a message, details a string or null. */
export function errorBodyProblem(body: any): string | null {
  if (body === null || typeof body !== 'object') return 'a body that is not a JSON object';
  if (body.success !== false) return 'success not false';
  if (typeof body.error !== 'string' || !/^[a-z_]+$/.test(body.error)) return 'no error code';
  if (typeof body.message !== 'string') return 'no message';
  if (!(typeof body.details === 'string' || body.details === null)) return 'details neither a string nor null';
  return null;
}
