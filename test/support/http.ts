// A small JSON client for tests: every call returns status, headers and the parsed body, after
// checking the response against the service's OpenAPI document (contract.ts).
import { checkResponse } from './contract';

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  token?: string;
  idempotencyKey?: string;
  headers?: Record<string, string>;
  /** Raw text body, sent as it is (for malformed-input tests). */
  raw?: string;
}

export async function call<T = any>(baseUrl: string, method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  let payload: string | undefined = options.raw;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: payload });
  const text = await response.text();
  let parsed: any = text;
  try { parsed = text ? JSON.parse(text) : null; } catch { /* keep text */ }
  await checkResponse(baseUrl, method, path, response.status, response.headers.get('content-type'), parsed);
  return { status: response.status, headers: response.headers, body: parsed };
}

/**
 * A 5xx is a defect of the service unless the test itself caused an outage (SPEC.md section 7: a
 * 500 never is an answer): the test that met it fails, naming the route, status and body.
 */
export function refuseServerError(method: string, path: string, response: JsonResponse): void {
  if (response.status >= 500) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  // 10 ms, growing to 200 ms: what comes quickly is seen quickly, and a long wait does not keep
  // the service (and the machine the suite shares) busy answering its polls.
  for (let pauseMs = 10; Date.now() < deadline; pauseMs = Math.min(200, pauseMs * 1.5)) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
}
