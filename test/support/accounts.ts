// Sandbox accounts and their credentials for tests: each call makes a fresh account (unique
// email), so every test has its own credentials and its own rate-limit bucket.
import { randomUUID } from 'node:crypto';
import { call } from './http';

export const TEST_PASSWORD = 'correct horse battery staple';

export interface SignedUp {
  account: { id: string; email: string; kyb_status: string; chain_wallet: { network: string; address: string } | null; [field: string]: unknown };
  vibans: Array<{ currency: string; [field: string]: unknown }>;
  /** The account's first secret key (sk_sandbox_…), shown once. */
  key: string;
  keyId: string;
  /** A session JWT for dashboard routes. */
  token: string;
  email: string;
  password: string;
  /** The Request-Id of the sign-up request. */
  requestId: string;
}

export const uniqueEmail = (label = 'user'): string => `${label}-${randomUUID()}@example.com`;

/** POST /v1/sandbox/accounts with a unique email; `overrides` replace or add body fields. */
export async function signUp(baseUrl: string, overrides: Record<string, unknown> = {}): Promise<SignedUp> {
  const body = { email: uniqueEmail(), password: TEST_PASSWORD, business_name: 'Test Business Ltd', country_code: 'GB', ...overrides };
  const response = await call(baseUrl, 'POST', '/v1/sandbox/accounts', body);
  if (response.status !== 201) throw new Error(`sign-up failed: ${response.status} ${JSON.stringify(response.body)}`);
  return {
    account: response.body.account,
    vibans: response.body.vibans,
    key: response.body.api_key.key,
    keyId: response.body.api_key.id,
    token: response.body.session.token,
    email: body.email as string,
    password: body.password as string,
    requestId: response.headers.get('request-id') ?? '',
  };
}

export interface CreatedKey {
  id: string;
  key: string;
  type: string;
  scopes: string[];
}

/** POST /v1/api-keys with a session token (or the master key plus `accountId`). */
export async function createKey(baseUrl: string, token: string, type: 'secret' | 'publishable' | 'restricted', scopes?: string[], accountId?: string): Promise<CreatedKey> {
  const body: Record<string, unknown> = { type };
  if (scopes) body.scopes = scopes;
  if (accountId) body.account_id = accountId;
  const response = await call(baseUrl, 'POST', '/v1/api-keys', body, { token, idempotencyKey: randomUUID() });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** POST /v1/customers with a fresh Idempotency-Key. */
export function createCustomer(baseUrl: string, key: string, overrides: Record<string, unknown> = {}) {
  const body = { email: uniqueEmail('customer'), business_name: 'Customer Co', country_code: 'DE', ...overrides };
  return call(baseUrl, 'POST', '/v1/customers', body, { token: key, idempotencyKey: randomUUID() });
}

/** POST /v1/contacts with a fresh Idempotency-Key. */
export function createContact(baseUrl: string, key: string, overrides: Record<string, unknown> = {}) {
  const body = { name: 'Ada Lovelace', email: uniqueEmail('contact'), ...overrides };
  return call(baseUrl, 'POST', '/v1/contacts', body, { token: key, idempotencyKey: randomUUID() });
}
