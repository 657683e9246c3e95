// The dashboard is a client of the public /v1 API, like any other: every call carries the
// session token, every write a fresh Idempotency-Key, and a refusal comes back as the API's error
// body (error, message, details naming the field) for the form to show next to that field.
export interface ApiErrorBody { error: string; message: string; details: string | null }

export class ApiError extends Error {
  constructor(readonly status: number, readonly body: ApiErrorBody) {
    super(body.message);
  }
}

let token: string | null = null;
/** Called when the session is refused (expired): the app signs out. */
let onUnauthorized: () => void = () => undefined;

export function setApiToken(value: string | null, unauthorized: () => void): void {
  token = value;
  onUnauthorized = unauthorized;
}

/**
 * Another credential for one call (the master key the Finance area asks for), the session
 * otherwise; and a write's own Idempotency-Key when a retry must repeat the same request.
 */
export interface CallOptions { credential?: string; idempotencyKey?: string }

export function authorization(options: CallOptions = {}): Record<string, string> {
  const bearer = options.credential ?? token;
  return bearer ? { Authorization: `Bearer ${bearer}` } : {};
}

async function refusal(response: Response, options: CallOptions): Promise<ApiError> {
  const text = await response.text();
  const parsed = text.startsWith('{') ? JSON.parse(text) : null;
  // Only the session's refusal signs out; a mistyped master key does not.
  if (response.status === 401 && token && options.credential === undefined) onUnauthorized();
  return new ApiError(response.status, parsed && typeof parsed.error === 'string' ? parsed as ApiErrorBody : { error: 'unexpected', message: `the API answered ${response.status}`, details: null });
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
  return (await answered<T>(method, path, body, options)).body;
}

/** A call's answer with its HTTP status: a 202 is a request not decided yet, whatever its body says. */
async function answered<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body: unknown, options: CallOptions): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = { ...authorization(options), Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['Idempotency-Key'] = options.idempotencyKey ?? crypto.randomUUID();
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) throw await refusal(response, options);
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

/** Saves what `path` answers as CSV to a file named `filename`, as the browser saves any download. */
export async function downloadCsv(path: string, filename: string, options: CallOptions = {}): Promise<void> {
  const response = await fetch(path, { headers: { ...authorization(options), Accept: 'text/csv' } });
  if (!response.ok) throw await refusal(response, options);
  // A server that has no CSV of this list answers its JSON: that is no file to save as CSV.
  if (!/^text\/csv/i.test(response.headers.get('Content-Type') ?? '')) throw new Error('the API has no CSV of this list');
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * Idempotency-Keys kept by request: the same request sent again after an answer that did not
 * decide it (lost on the way, a 5xx, a ledger still deciding) goes under the same key, so the
 * API does it at most once; once it is decided (done, or refused for good: a 4xx) the key is
 * forgotten, and the same request made again later is a new one.
 */
export class RetryKeys {
  private readonly keys = new Map<string, string>();

  keyFor(signature: string): string {
    let key = this.keys.get(signature);
    if (!key) this.keys.set(signature, key = crypto.randomUUID());
    return key;
  }

  settled(signature: string, error?: unknown): void {
    if (error === undefined || (error instanceof ApiError && error.status < 500)) this.keys.delete(signature);
  }
}

const PENDING_RETRY_MS = 1000;
const PENDING_TRIES = 15;

/**
 * A write the ledger decides (wallet transfers, holds, reversals, a transfer's metadata): sent under
 * `keys`' key for this request, and while the ledger has not decided yet (202) sent again under that
 * key until it answers what it decided (a return through a partner is decided `pending`: the
 * partner's answer comes later, by events); the key outlives a failure, for the person's next try.
 */
export async function ledgerWrite<T extends { status: string }>(keys: RetryKeys, path: string, body?: Record<string, unknown>, method: 'POST' | 'PATCH' = 'POST'): Promise<T> {
  const signature = JSON.stringify([method, path, body ?? null]);
  const idempotencyKey = keys.keyFor(signature);
  try {
    for (let attempt = 1; ; attempt += 1) {
      const answer = await answered<T>(method, path, body, { idempotencyKey });
      if (answer.status !== 202) { keys.settled(signature); return answer.body; }
      if (attempt >= PENDING_TRIES) throw new Error('the ledger has not decided yet: press the button again in a moment (it is not done twice)');
      await new Promise((resolve) => setTimeout(resolve, PENDING_RETRY_MS));
    }
  } catch (error) {
    keys.settled(signature, error);
    throw error;
  }
}
