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

export function authorization(): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { ...authorization(), Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['Idempotency-Key'] = crypto.randomUUID();
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) {
    if (response.status === 401 && token) onUnauthorized();
    const error = parsed && typeof parsed.error === 'string' ? parsed as ApiErrorBody : { error: 'unexpected', message: `the API answered ${response.status}`, details: null };
    throw new ApiError(response.status, error);
  }
  return parsed as T;
}
