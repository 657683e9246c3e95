// Funding and transfer helpers for tests that move money through the real ledger.
import { randomUUID } from 'node:crypto';
import { signUp, type SignedUp } from './accounts';
import { call, eventually, refuseServerError, type JsonResponse } from './http';

const FUND_ATTEMPTS_MAX = 20;

/**
 * Credits test funds as a SPEC.md section 7 client would: a 202 (the ledger has not decided yet,
 * as on a loaded machine) is repeated with the same Idempotency-Key until the decision. A 5xx
 * fails the test: no caller funds an account during an outage it caused.
 */
export async function fund(baseUrl: string, key: string, currency: string, amount: string): Promise<void> {
  const idempotencyKey = randomUUID();
  for (let attempt = 1; attempt <= FUND_ATTEMPTS_MAX; attempt++) {
    const response = await call(baseUrl, 'POST', '/v1/sandbox/faucet', { currency, amount }, { token: key, idempotencyKey });
    if (response.status === 201 || response.status === 200) return;
    refuseServerError('POST', '/v1/sandbox/faucet', response);
    if (response.status !== 202) throw new Error(`faucet failed: ${response.status} ${JSON.stringify(response.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
  }
  throw new Error(`faucet gave no decision in ${FUND_ATTEMPTS_MAX} attempts`);
}

/** Two new accounts, the first funded with `amount` `currency`: one to pay, one to be paid. */
export async function payerAndPayee(baseUrl: string, currency: string, amount: string): Promise<[SignedUp, SignedUp]> {
  const pair = await Promise.all([signUp(baseUrl), signUp(baseUrl)]);
  await fund(baseUrl, pair[0].key, currency, amount);
  return pair;
}

export function transfer(baseUrl: string, key: string, body: Record<string, unknown>, idempotencyKey = randomUUID()): Promise<JsonResponse> {
  return call(baseUrl, 'POST', '/v1/transfers', body, { token: key, idempotencyKey });
}

/** Balance totals of an account by settlement currency, read through its session. */
export async function balances(baseUrl: string, token: string): Promise<Record<string, { amount: string; available: string; pending: string }>> {
  const response = await call(baseUrl, 'GET', '/v1/accounts/me/balance', undefined, { token });
  if (response.status !== 200) throw new Error(`balance failed: ${response.status} ${JSON.stringify(response.body)}`);
  return Object.fromEntries(response.body.totals.map((t: any) => [t.currency, t]));
}

/** Waits until the transfer reaches `status`, and returns it. */
export function transferReaches(baseUrl: string, key: string, transferId: string, status: string, timeoutMs = 15_000): Promise<any> {
  return eventually(async () => {
    const response = await call(baseUrl, 'GET', `/v1/transfers/${transferId}`, undefined, { token: key });
    return response.body?.status === status ? response.body : undefined;
  }, timeoutMs, `transfer ${transferId} to reach ${status}`);
}
