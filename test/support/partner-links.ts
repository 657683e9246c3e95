// The three-legged partner link as a browser drives it: open the partner's consent page, submit
// its form, follow the redirect to the service's callback. And the payment references tests give
// the partner rails.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createCustomer, signUp, type SignedUp } from './accounts';
import { call } from './http';

/** A payment reference no other test uses, for a call to the partner rails. */
export const uniqueReference = (): string => `ref_${randomUUID()}`;

export interface Browsed { status: number; location: string | null; html: string }

/** One browser request that does not follow redirects; with `form`, a form-encoded POST. */
export async function browse(url: string, form?: Record<string, string>): Promise<Browsed> {
  const response = await fetch(url, form
    ? { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() }
    : { redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), html: await response.text() };
}

/** Opens the consent page and answers it; returns where the partner redirects the browser. */
export async function consent(authorizeUrl: string, decision: 'approve' | 'deny'): Promise<string> {
  const page = await browse(authorizeUrl);
  assert.equal(page.status, 200, page.html);
  const token = /name="consent_token" value="([^"]+)"/.exec(page.html)?.[1];
  assert.ok(token, 'the consent page has its form');
  const answered = await browse(authorizeUrl, { consent_token: token, decision });
  assert.equal(answered.status, 302);
  return answered.location!;
}

/** Links a customer with a partner, as the customer would; returns the link's id. */
export async function linkCustomer(baseUrl: string, key: string, customerId: string, partner: string): Promise<string> {
  const created = await call(baseUrl, 'POST', `/v1/customers/${customerId}/partner-links`, { partner }, { token: key, idempotencyKey: randomUUID() });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const landed = await browse(await consent(created.body.authorize_url, 'approve'));
  assert.equal(landed.status, 200, landed.html);
  return created.body.id;
}

/** A new account (with `fields` at sign-up) and a customer of its own, linked with each of `partners`. */
export async function ownerWithCustomer(baseUrl: string, partners: string[] = [], fields: Record<string, unknown> = {}): Promise<{ owner: SignedUp; customerId: string }> {
  const owner = await signUp(baseUrl, fields);
  const customerId = (await createCustomer(baseUrl, owner.key)).body.id;
  for (const partner of partners) await linkCustomer(baseUrl, owner.key, customerId, partner);
  return { owner, customerId };
}
