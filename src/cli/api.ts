// payctl's client of the public /v1 API: the credential and base URL of the profile (or the
// PAYCTL_API_KEY and PAYCTL_BASE_URL overrides), JSON in and out, and the API's error body
// turned into an error that says what to do.
import { DEFAULT_BASE_URL, loadProfile } from './config';

/** An answer of the API that is an error body (SPEC.md section 2). */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: string | null) {
    super(message);
  }
}

/** Anything else that stops a command: said to the user as it is, exit status 1. */
export class UsageError extends Error {}

export interface Connection {
  baseUrl: string;
  /** The credential for API calls: the API key if there is one, else the session. */
  token: string | null;
  apiKey: string | null;
  session: string | null;
}

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The base URL without its trailing slashes, if payctl may send a credential there: HTTPS, or
 * plain HTTP to this machine only (anyone on the path would read a key or password sent in clear).
 * @throws UsageError for another address
 */
export function checkedBaseUrl(raw: string): string {
  const baseUrl = raw.replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`"${raw}" is not a URL; give the service's address, e.g. https://payments.example.com`);
  }
  if (url.protocol === 'https:') return baseUrl;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.test(url.hostname)) return baseUrl;
  throw new UsageError(`payctl sends credentials only over HTTPS, or plain HTTP to this machine (127.0.0.1, localhost, [::1]); ${baseUrl} is neither`);
}

export function connect(profileName: string, env = process.env): Connection {
  const profile = loadProfile(profileName, env);
  const sessionValid = profile?.session && Date.parse(profile.session.expiresAt) > Date.now();
  const apiKey = env.PAYCTL_API_KEY || profile?.apiKey || null;
  const session = sessionValid ? profile!.session!.token : null;
  const baseUrl = checkedBaseUrl(env.PAYCTL_BASE_URL || profile?.baseUrl || DEFAULT_BASE_URL);
  return { baseUrl, apiKey, session, token: apiKey ?? session };
}

export function requireToken(connection: Connection, profileName: string): string {
  if (connection.token) return connection.token;
  const profile = profileName === 'default' ? '' : ` --profile ${profileName}`;
  throw new UsageError(`not logged in (or the session expired): run payctl login${profile} --api-key <key>, or --email <you@example.com>`);
}

export interface Answer { status: number; headers: Headers; body: unknown }

/** One API call; an error body becomes an ApiError, a network failure a UsageError that names the address. */
export async function request(connection: Connection, method: string, path: string, options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const token = options.token === undefined ? connection.token : options.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${connection.baseUrl}${path.startsWith('/') ? path : `/${path}`}`, {
      method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new UsageError(`cannot reach ${connection.baseUrl} (${cause}); is the service running? (npm start, or --base-url)`);
  }
  const text = await response.text();
  let body: unknown = text;
  try { body = text ? JSON.parse(text) : null; } catch { /* not JSON: kept as text */ }
  if (response.status >= 400) {
    const error = body as { error?: string; message?: string; details?: string | null } | null;
    throw new ApiError(response.status, error?.error ?? `http_${response.status}`, error?.message ?? String(text).slice(0, 200), error?.details ?? null);
  }
  return { status: response.status, headers: response.headers, body };
}
