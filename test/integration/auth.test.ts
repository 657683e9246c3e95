// Authentication and permission rules of SPEC.md section 5 (error codes of section 7), on the
// real routes of the running service, plus sign-up, sign-in and API-key management
// (DESIGN.md section 5).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { hashApiKey, SESSION_AUDIENCE, SESSION_ISSUER } from '../../src/auth/credentials';
import { apiRoutes } from '../../src/roles';
import { testService } from '../hooks';
import { createContact, createCustomer, createKey, signUp, TEST_PASSWORD, uniqueEmail } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { balances, fund } from '../support/money';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomKeyBody = (): string => Array.from({ length: 32 }, () => ALPHANUMERIC[Math.floor(Math.random() * ALPHANUMERIC.length)]).join('');

/** A session JWT as the service would sign it, with the claims and algorithm of our choice. */
async function sessionJwt(accountId: string, options: { secret?: string; alg?: string; expiresAt?: number; env?: string; issuer?: string; audience?: string } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ env: options.env ?? 'sandbox' })
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .setSubject(accountId)
    .setIssuer(options.issuer ?? SESSION_ISSUER)
    .setAudience(options.audience ?? SESSION_AUDIENCE)
    .setJti(randomUUID())
    .setIssuedAt(now - 7200)
    .setExpirationTime(options.expiresAt ?? now + 600)
    .sign(new TextEncoder().encode(options.secret ?? testService().runtime.config.jwtSecret));
}

/** Status and the exact bytes of the body, for comparing two answers byte for byte. */
async function rawGet(baseUrl: string, path: string, token: string): Promise<{ status: number; text: string; elapsedMs: number }> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  return { status: response.status, text, elapsedMs: performance.now() - started };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

describe('authentication and permissions (SPEC.md section 5)', () => {
  const base = () => testService().baseUrl;

  it('rejects, in order of precedence, each credential failure with its code', async () => {
    const owner = await signUp(base());
    const { jwtSecret } = testService().runtime.config;
    const publishable = await createKey(base(), owner.token, 'publishable');
    const readOnly = await createKey(base(), owner.token, 'restricted', ['customers:read']);
    const now = Math.floor(Date.now() / 1000);
    const customer = { email: uniqueEmail('customer'), business_name: 'Precedence Co', country_code: 'FR' };
    const post = (token?: string) => call(base(), 'POST', '/v1/customers', customer, { token, idempotencyKey: randomUUID() });
    const vibans = (token: string) => call(base(), 'GET', '/v1/accounts/me/vibans', undefined, { token });

    const table: Array<[string, () => Promise<JsonResponse>, number, string]> = [
      ['no Authorization header', () => post(), 401, 'authentication_required'],
      ['a Basic Authorization header', () => call(base(), 'GET', '/v1/customers', undefined, { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'authentication_required'],
      ['a live key on the sandbox server', () => post(`sk_live_${randomKeyBody()}`), 403, 'environment_mismatch'],
      // The prefix alone decides (SPEC.md section 5): a live key of any length or shape.
      ['a short live key on the sandbox server', () => post('sk_live_abc'), 403, 'environment_mismatch'],
      ['a live publishable key with odd characters', () => post('pk_live_not-base62!'), 403, 'environment_mismatch'],
      ['a live restricted key with nothing after the prefix', () => post('rk_live_'), 403, 'environment_mismatch'],
      ['a live session on the sandbox server', async () => vibans(await sessionJwt(owner.account.id, { env: 'live' })), 403, 'environment_mismatch'],
      ['an unknown secret key', () => post(`sk_sandbox_${randomKeyBody()}`), 401, 'invalid_api_key'],
      ['a token that is neither a key nor a JWT', () => post('not-a-credential'), 401, 'invalid_api_key'],
      ['an expired session', async () => vibans(await sessionJwt(owner.account.id, { expiresAt: now - 60 })), 401, 'token_expired'],
      ['a session signed with another secret', async () => vibans(await sessionJwt(owner.account.id, { secret: `${jwtSecret}-forged` })), 401, 'invalid_token'],
      ['a malformed JWT', () => vibans('a.b.c'), 401, 'invalid_token'],
      ['a session of another issuer, signed with the right secret', async () => vibans(await sessionJwt(owner.account.id, { issuer: 'someone-else' })), 401, 'invalid_token'],
      ['a session meant for another audience, signed with the right secret', async () => vibans(await sessionJwt(owner.account.id, { audience: 'another-service' })), 401, 'invalid_token'],
      ['a session signed with HS512 and the right secret', async () => vibans(await sessionJwt(owner.account.id, { alg: 'HS512' })), 401, 'invalid_token'],
      ['an unsigned session (alg none)', () => vibans(new UnsecuredJWT({ env: 'sandbox' }).setSubject(owner.account.id).setExpirationTime('10m').encode()), 401, 'invalid_token'],
      ['a secret key on a dashboard route', () => vibans(owner.key), 403, 'dashboard_access_denied'],
      ['a publishable key writing', () => post(publishable.key), 403, 'publishable_key_write_denied'],
      ['a restricted key without the route scope', () => post(readOnly.key), 403, 'insufficient_scope'],
    ];
    for (const [what, request, status, code] of table) expectError(await request(), status, code, undefined, what);
  });

  it('answers an unknown key and a revoked key with byte-identical bodies in the same time', async () => {
    const owner = await signUp(base());
    const revoked = await createKey(base(), owner.token, 'secret');
    const revoke = await call(base(), 'DELETE', `/v1/api-keys/${revoked.id}`, undefined, { token: owner.token, idempotencyKey: randomUUID() });
    assert.equal(revoke.status, 200);
    const unknown = `sk_sandbox_${randomKeyBody()}`;

    const unknownAnswer = await rawGet(base(), '/v1/customers', unknown);
    const revokedAnswer = await rawGet(base(), '/v1/customers', revoked.key);
    assert.equal(unknownAnswer.status, 401);
    assert.equal(revokedAnswer.status, 401);
    assert.equal(JSON.parse(unknownAnswer.text).error, 'invalid_api_key');
    assert.equal(revokedAnswer.text, unknownAnswer.text, 'the bodies differ, so a caller can tell a revoked key from an unknown one');
    // Each refused once by Postgres, both are answered from their markers from now on: one cost.
    const slotOf = (key: string) => testService().runtime.redis.get(`auth:key:v2:${hashApiKey(key)}`);
    await eventually(async () => ((await slotOf(revoked.key))?.match(/^!revoked:.*:refused$/) ? true : undefined), 5_000, 'the revoked key refused from its marker');
    await eventually(async () => ((await slotOf(unknown))?.startsWith('!unknown:') ? true : undefined), 5_000, 'the unknown key refused from its marker');

    // In pairs, each pair's order alternating, and judged by the median of the pairs' differences:
    // drift of the machine's load (other test files run beside this one) hits both sides of a
    // pair alike, and neither side always goes first.
    const pairs = 40;
    const unknownMs: number[] = [];
    const revokedMs: number[] = [];
    const differencesMs: number[] = [];
    for (let i = 0; i < pairs; i++) {
      const timeOf = async (key: string) => (await rawGet(base(), '/v1/customers', key)).elapsedMs;
      let u: number;
      let r: number;
      if (i % 2 === 0) {
        u = await timeOf(unknown);
        r = await timeOf(revoked.key);
      } else {
        r = await timeOf(revoked.key);
        u = await timeOf(unknown);
      }
      unknownMs.push(u);
      revokedMs.push(r);
      differencesMs.push(r - u);
    }
    // A sign test: were the two equally costly, the revoked key would be the slower of a pair about
    // half the time, whatever the machine's load (the order alternates); 31 or more of 40 either way
    // happens by chance about once in 1,500 runs. A gap of a fraction of a millisecond (one lookup)
    // makes one side the slower of nearly every pair on a quiet machine; on a loaded one the answer
    // times are stretched alike and the count stays near half.
    const revokedSlower = differencesMs.filter((d) => d > 0).length;
    assert.ok(revokedSlower > pairs - 31 && revokedSlower < 31,
      `the revoked key was the slower of ${revokedSlower} pairs of ${pairs} (medians: unknown ${median(unknownMs).toFixed(2)} ms, revoked ${median(revokedMs).toFixed(2)} ms)`);
  });

  it('accepts a session and the master key on a dashboard route; the master key names the account', async () => {
    const owner = await signUp(base());
    const masterKey = testService().runtime.config.masterKey;
    const bySession = await call(base(), 'GET', '/v1/accounts/me/vibans', undefined, { token: owner.token });
    assert.equal(bySession.status, 200, JSON.stringify(bySession.body));
    assert.deepEqual(bySession.body.data.map((v: { currency: string }) => v.currency), ['EUR', 'GBP', 'USD']);

    const byMaster = await call(base(), 'GET', `/v1/accounts/me/vibans?account_id=${owner.account.id}`, undefined, { token: masterKey });
    assert.equal(byMaster.status, 200, JSON.stringify(byMaster.body));
    assert.deepEqual(byMaster.body.data, bySession.body.data);

    expectError(await call(base(), 'GET', '/v1/accounts/me/vibans', undefined, { token: masterKey }), 400, 'invalid_request', 'account_id');
  });

  it('denies every dashboard route to sk_, pk_ and rk_ keys', async () => {
    const owner = await signUp(base());
    const keys = {
      secret: owner.key,
      publishable: (await createKey(base(), owner.token, 'publishable')).key,
      restricted: (await createKey(base(), owner.token, 'restricted', ['transfers:read', 'customers:read'])).key,
    };
    // Every route declared as a dashboard route, so routes added later (balance, notifications)
    // are covered as they appear.
    const dashboardRoutes = apiRoutes(testService().runtime).filter((r) => r.auth.kind === 'dashboard');
    for (const path of ['/v1/accounts/me/vibans', '/v1/accounts/me/balance', '/v1/notifications']) {
      assert.ok(dashboardRoutes.some((r) => r.method === 'GET' && r.path === path), `GET ${path} is declared a dashboard route`);
    }
    for (const route of dashboardRoutes) {
      const path = route.path.replace(/\{\w+\}/g, randomUUID());
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
      for (const [type, key] of Object.entries(keys)) {
        const response = await call(base(), route.method, path, body, { token: key, idempotencyKey: randomUUID() });
        expectError(response, 403, 'dashboard_access_denied', undefined, `${type} key on ${route.method} ${route.path}`);
      }
    }
  });

  it('lets a restricted key call a route only with that route\'s scope', async () => {
    const owner = await signUp(base());
    const readOnly = await createKey(base(), owner.token, 'restricted', ['customers:read']);
    const writer = await createKey(base(), owner.token, 'restricted', ['customers:write']);

    expectError(await createCustomer(base(), readOnly.key), 403, 'insufficient_scope', 'customers:write');
    const created = await createCustomer(base(), writer.key);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const listed = await call(base(), 'GET', '/v1/customers', undefined, { token: readOnly.key });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.data.map((c: { id: string }) => c.id), [created.body.id]);
    expectError(await call(base(), 'GET', '/v1/customers', undefined, { token: writer.key }), 403, 'insufficient_scope', 'customers:read');
  });

  it('lets a publishable key read what a page may show, and nothing else; never write', async () => {
    const owner = await signUp(base());
    const publishable = await createKey(base(), owner.token, 'publishable');
    expectError(await createCustomer(base(), publishable.key), 403, 'publishable_key_write_denied');
    const me = await call(base(), 'GET', '/v1/accounts/me', undefined, { token: publishable.key });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.id, owner.account.id);
    expectError(await call(base(), 'GET', '/v1/customers', undefined, { token: publishable.key }), 403, 'insufficient_scope');
  });

  it("denies an account another account's customer, contact and request log", async () => {
    const alice = await signUp(base());
    const bob = await signUp(base());
    const customer = await createCustomer(base(), alice.key);
    const contact = await createContact(base(), alice.key);
    assert.equal(customer.status, 201);
    assert.equal(contact.status, 201);
    const logId = customer.headers.get('request-id')!;
    const masterKey = testService().runtime.config.masterKey;
    await eventually(async () => ((await call(base(), 'GET', `/v1/request-logs/${logId}`, undefined, { token: masterKey })).status === 200 ? true : undefined), 15_000, 'the request log');

    const table: Array<[string, string]> = [
      ['customer', `/v1/customers/${customer.body.id}`],
      ['contact', `/v1/contacts/${contact.body.id}`],
      ['request log', `/v1/request-logs/${logId}`],
    ];
    for (const [what, path] of table) {
      expectError(await call(base(), 'GET', path, undefined, { token: bob.key }), 403, 'cross_account_access_denied', undefined, what);
      const own = await call(base(), 'GET', path, undefined, { token: alice.key });
      assert.equal(own.status, 200, `${what}: the owner reads it`);
    }
    const patch = await call(base(), 'PATCH', `/v1/contacts/${contact.body.id}`, { note: 'not yours' }, { token: bob.key, idempotencyKey: randomUUID() });
    expectError(patch, 403, 'cross_account_access_denied');
  });

  it('refuses money movement until the account is KYB-active, and allows reads meanwhile', async () => {
    const pending = await signUp(base(), { kyb_status: 'pending' });
    assert.equal(pending.account.kyb_status, 'pending');
    const masterKey = testService().runtime.config.masterKey;
    const faucet = (token: string) => call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '10.00' }, { token, idempotencyKey: randomUUID() });
    const transfer = { recipient_email: uniqueEmail('recipient'), amount: '1.00', currency: 'USD', note: 'kyb' };

    expectError(await faucet(pending.key), 403, 'account_not_active', undefined, 'faucet with the secret key');
    expectError(await faucet(pending.token), 403, 'account_not_active', undefined, 'faucet with the session');
    expectError(await call(base(), 'POST', '/v1/transfers', transfer, { token: pending.key, idempotencyKey: randomUUID() }), 403, 'account_not_active', undefined, 'transfer');
    assert.equal((await call(base(), 'GET', '/v1/customers', undefined, { token: pending.key })).status, 200, 'reads are allowed');
    assert.equal((await createCustomer(base(), pending.key)).status, 201, 'writes that move no money are allowed');

    const activated = await call(base(), 'PATCH', `/v1/sandbox/accounts/${pending.account.id}`, { kyb_status: 'active' }, { token: masterKey, idempotencyKey: randomUUID() });
    assert.equal(activated.status, 200);
    // The ledger's decision, not a provisional 202: fund repeats the request under its key until it is decided, and fails on a refusal.
    await fund(base(), pending.key, 'USD', '10.00');
    assert.equal((await balances(base(), pending.token)).USD.available, '10.00', 'credited once the account is active');
  });

  it('lets only the master key act for a named account_id', async () => {
    const alice = await signUp(base());
    const bob = await signUp(base());
    const masterKey = testService().runtime.config.masterKey;
    const customer = () => ({ email: uniqueEmail('customer'), business_name: 'Named Ltd', country_code: 'GB' });

    const table: Array<[string, () => Promise<JsonResponse>, number, string, string]> = [
      ["a key naming another account in the body", () => call(base(), 'POST', '/v1/customers', { ...customer(), account_id: alice.account.id }, { token: bob.key, idempotencyKey: randomUUID() }), 403, 'cross_account_access_denied', 'account_id'],
      ["a key naming another account in the query", () => call(base(), 'GET', `/v1/customers?account_id=${alice.account.id}`, undefined, { token: bob.key }), 403, 'cross_account_access_denied', 'account_id'],
      ["a session naming another account", () => call(base(), 'GET', `/v1/accounts/me/vibans?account_id=${alice.account.id}`, undefined, { token: bob.token }), 403, 'cross_account_access_denied', 'account_id'],
      ['the master key naming no account', () => call(base(), 'POST', '/v1/customers', customer(), { token: masterKey, idempotencyKey: randomUUID() }), 400, 'invalid_request', 'account_id'],
      ['the master key naming an unknown account (customer)', () => call(base(), 'POST', '/v1/customers', { ...customer(), account_id: randomUUID() }, { token: masterKey, idempotencyKey: randomUUID() }), 404, 'resource_not_found', 'account_id'],
      ['the master key naming an unknown account (contact)', () => call(base(), 'POST', '/v1/contacts', { name: 'N', email: uniqueEmail(), account_id: randomUUID() }, { token: masterKey, idempotencyKey: randomUUID() }), 404, 'resource_not_found', 'account_id'],
    ];
    const bobsCustomer = (await call(base(), 'POST', '/v1/customers', customer(), { token: bob.key, idempotencyKey: randomUUID() })).body.id as string;
    const funds = { customer_id: bobsCustomer, partner: 'openbank', amount: '5.00', currency: 'USD' };
    table.push(
      ['the master key naming an account but drawing on another account\'s customer', () => call(base(), 'POST', '/v1/payments/add-funds', { ...funds, account_id: alice.account.id }, { token: masterKey, idempotencyKey: randomUUID() }), 403, 'cross_account_access_denied', 'customer_id'],
      ['the master key naming the customer\'s account, but the customer is not linked', () => call(base(), 'POST', '/v1/payments/add-funds', { ...funds, account_id: bob.account.id }, { token: masterKey, idempotencyKey: randomUUID() }), 400, 'customer_not_linked', 'customer_id'],
    );
    for (const [what, request, status, code, details] of table) expectError(await request(), status, code, details, what);

    const ownName = await call(base(), 'POST', '/v1/customers', { ...customer(), account_id: bob.account.id }, { token: bob.key, idempotencyKey: randomUUID() });
    assert.equal(ownName.status, 201, 'naming its own account is allowed');
    const byMaster = await call(base(), 'POST', '/v1/customers', { ...customer(), account_id: alice.account.id }, { token: masterKey, idempotencyKey: randomUUID() });
    assert.equal(byMaster.status, 201, JSON.stringify(byMaster.body));
    assert.equal(byMaster.body.account_id, alice.account.id);
    const alicesList = await call(base(), 'GET', '/v1/customers', undefined, { token: alice.key });
    assert.deepEqual(alicesList.body.data.map((c: { id: string }) => c.id), [byMaster.body.id]);
    const bobsList = await call(base(), 'GET', '/v1/customers', undefined, { token: bob.key });
    assert.deepEqual(bobsList.body.data.map((c: { id: string }) => c.id).sort(), [ownName.body.id, bobsCustomer].sort(), 'nothing was created for bob by the refused requests');

    const unknownKeyAccount = await call(base(), 'POST', '/v1/api-keys', { type: 'secret', account_id: randomUUID() }, { token: masterKey, idempotencyKey: randomUUID() });
    expectError(unknownKeyAccount, 404, 'resource_not_found');
    const keyForAlice = await createKey(base(), masterKey, 'publishable', undefined, alice.account.id);
    assert.equal((await call(base(), 'GET', '/v1/accounts/me', undefined, { token: keyForAlice.key })).body.id, alice.account.id);
  });
});

describe('sandbox accounts and sessions (DESIGN.md section 5)', () => {
  const base = () => testService().baseUrl;

  it('signs up an active account with vIBANs, a secret key shown once and a working session', async () => {
    const owner = await signUp(base());
    assert.equal(owner.account.kyb_status, 'active');
    assert.equal(owner.account.chain_wallet, null);
    assert.deepEqual(owner.vibans.map((v) => v.currency).sort(), ['EUR', 'GBP', 'USD']);
    assert.match(owner.key, /^sk_sandbox_[A-Za-z0-9]{32}$/);
    const me = await call(base(), 'GET', '/v1/accounts/me', undefined, { token: owner.key });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, owner.account.id);
    const keys = await call(base(), 'GET', '/v1/api-keys', undefined, { token: owner.token });
    assert.equal(keys.status, 200);
    assert.equal(keys.body.data.length, 1);
    assert.equal(keys.body.data[0].key, undefined, 'the list never shows the secret');
  });

  it('signs in with the right password, and answers a wrong password and an unknown email alike', async () => {
    const owner = await signUp(base());
    const session = await call(base(), 'POST', '/v1/auth/sessions', { email: owner.email.toUpperCase(), password: TEST_PASSWORD });
    assert.equal(session.status, 201, JSON.stringify(session.body));
    assert.ok(Date.parse(session.body.expires_at) > Date.now());
    const vibans = await call(base(), 'GET', '/v1/accounts/me/vibans', undefined, { token: session.body.token });
    assert.equal(vibans.status, 200);

    const wrongPassword = await call(base(), 'POST', '/v1/auth/sessions', { email: owner.email, password: `${TEST_PASSWORD}!` });
    const unknownEmail = await call(base(), 'POST', '/v1/auth/sessions', { email: uniqueEmail('nobody'), password: TEST_PASSWORD });
    expectError(wrongPassword, 401, 'invalid_credentials');
    assert.deepEqual(unknownEmail.body, wrongPassword.body);
    assert.equal(unknownEmail.status, wrongPassword.status);
  });

  it('rejects, in order, a duplicate email and an invalid country code', async () => {
    const owner = await signUp(base());
    const table: Array<[string, Record<string, unknown>, number, string, string]> = [
      ['the same email', { email: owner.email }, 409, 'resource_already_exists', 'email'],
      ['the same email in capitals', { email: owner.email.toUpperCase() }, 409, 'resource_already_exists', 'email'],
      ['an unassigned country code', { country_code: 'XX' }, 400, 'invalid_country_code', 'country_code'],
      ['a lower-case country code', { country_code: 'gb' }, 400, 'invalid_country_code', 'country_code'],
      ['a short password', { password: 'short' }, 400, 'invalid_request', 'password'],
    ];
    for (const [what, overrides, status, code, details] of table) {
      const body = { email: uniqueEmail(), password: TEST_PASSWORD, business_name: 'Dup Ltd', country_code: 'GB', ...overrides };
      expectError(await call(base(), 'POST', '/v1/sandbox/accounts', body), status, code, details, what);
    }
  });

  it('makes an account without rails (vibans: false) and one with a chain wallet', async () => {
    const noRails = await signUp(base(), { vibans: false });
    assert.deepEqual(noRails.vibans, []);
    const listed = await call(base(), 'GET', '/v1/accounts/me/vibans', undefined, { token: noRails.token });
    assert.deepEqual(listed.body.data, []);

    const withWallet = await signUp(base(), { chain_wallet: true });
    assert.ok(withWallet.account.chain_wallet, 'the account has a chain wallet');
    assert.equal(typeof withWallet.account.chain_wallet.address, 'string');
    assert.ok(withWallet.account.chain_wallet.address.length > 0);
    const me = await call(base(), 'GET', '/v1/accounts/me', undefined, { token: withWallet.key });
    assert.deepEqual(me.body.chain_wallet, withWallet.account.chain_wallet);
  });

  it('lets only the master key set the KYB status of an account', async () => {
    const owner = await signUp(base());
    const path = `/v1/sandbox/accounts/${owner.account.id}`;
    const masterKey = testService().runtime.config.masterKey;
    expectError(await call(base(), 'PATCH', path, { kyb_status: 'suspended' }, { token: owner.key, idempotencyKey: randomUUID() }), 403, 'insufficient_scope');
    expectError(await call(base(), 'PATCH', path, { kyb_status: 'suspended' }, { token: owner.token, idempotencyKey: randomUUID() }), 403, 'insufficient_scope');
    expectError(await call(base(), 'PATCH', path, { kyb_status: 'asleep' }, { token: masterKey, idempotencyKey: randomUUID() }), 400, 'invalid_request', 'kyb_status');
    expectError(await call(base(), 'PATCH', `/v1/sandbox/accounts/${randomUUID()}`, { kyb_status: 'pending' }, { token: masterKey, idempotencyKey: randomUUID() }), 404, 'resource_not_found');

    const updated = await call(base(), 'PATCH', path, { kyb_status: 'pending' }, { token: masterKey, idempotencyKey: randomUUID() });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.kyb_status, 'pending');
    const me = await call(base(), 'GET', '/v1/accounts/me', undefined, { token: owner.key });
    assert.equal(me.body.kyb_status, 'pending');
  });
});

describe('API keys (DESIGN.md section 5)', () => {
  const base = () => testService().baseUrl;

  it('creates secret, publishable and restricted keys, each shown once and listed without the secret', async () => {
    const owner = await signUp(base());
    const created = [
      await createKey(base(), owner.token, 'secret'),
      await createKey(base(), owner.token, 'publishable'),
      await createKey(base(), owner.token, 'restricted', ['transfers:read', 'payments:write']),
    ];
    assert.match(created[0].key, /^sk_sandbox_[A-Za-z0-9]{32}$/);
    assert.match(created[1].key, /^pk_sandbox_[A-Za-z0-9]{32}$/);
    assert.match(created[2].key, /^rk_sandbox_[A-Za-z0-9]{32}$/);
    assert.deepEqual(created[2].scopes, ['transfers:read', 'payments:write']);

    const listed = await call(base(), 'GET', '/v1/api-keys', undefined, { token: owner.token });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data.length, 4, 'the sign-up key and the three new ones');
    for (const key of listed.body.data) assert.equal('key' in key, false, `the list shows the secret of ${key.id}`);
    const text = JSON.stringify(listed.body);
    for (const { key } of created) assert.equal(text.includes(key), false);
    assert.deepEqual(new Set(listed.body.data.map((k: { id: string }) => k.id)), new Set([owner.keyId, ...created.map((k) => k.id)]));

    // Newest first, in pages like every list.
    const newestFirst = [...created.map((k) => k.id)].reverse().concat(owner.keyId);
    assert.deepEqual(listed.body.data.map((k: { id: string }) => k.id), newestFirst);
    const first = await call(base(), 'GET', '/v1/api-keys?limit=3', undefined, { token: owner.token });
    assert.equal(first.body.has_more, true);
    const rest = await call(base(), 'GET', `/v1/api-keys?before=${first.body.next_cursor}`, undefined, { token: owner.token });
    assert.deepEqual(rest.body.data.map((k: { id: string }) => k.id), [owner.keyId]);
    assert.equal(rest.body.has_more, false);
    const second = await call(base(), 'GET', '/v1/api-keys?limit=1&offset=1', undefined, { token: owner.token });
    assert.deepEqual(second.body.data.map((k: { id: string }) => k.id), [newestFirst[1]]);

    // Each new key works: the secret key reads customers, the publishable one what a page may show.
    assert.equal((await call(base(), 'GET', '/v1/customers', undefined, { token: created[0].key })).status, 200);
    assert.equal((await call(base(), 'GET', '/v1/accounts/me', undefined, { token: created[1].key })).status, 200);
  });

  it('rejects, in order, a bad key request', async () => {
    const owner = await signUp(base());
    const table: Array<[string, Record<string, unknown>, number, string, string]> = [
      ['a missing type', {}, 400, 'invalid_request', 'type'],
      ['an unknown type', { type: 'admin' }, 400, 'invalid_key_type', 'type'],
      ['an unknown scope', { type: 'restricted', scopes: ['everything:write'] }, 400, 'invalid_request', 'scopes[0]'],
      ['a restricted key without scopes', { type: 'restricted' }, 400, 'invalid_request', 'scopes'],
      ['scopes on a secret key', { type: 'secret', scopes: ['transfers:read'] }, 400, 'invalid_request', 'scopes'],
    ];
    for (const [what, body, status, code, details] of table) {
      const response = await call(base(), 'POST', '/v1/api-keys', body, { token: owner.token, idempotencyKey: randomUUID() });
      expectError(response, status, code, details, what);
    }
  });

  it('stops a revoked key on the very next request', async () => {
    const owner = await signUp(base());
    const key = await createKey(base(), owner.token, 'secret');
    assert.equal((await call(base(), 'GET', '/v1/customers', undefined, { token: key.key })).status, 200);
    const revoked = await call(base(), 'DELETE', `/v1/api-keys/${key.id}`, undefined, { token: owner.token, idempotencyKey: randomUUID() });
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revoked_at);
    expectError(await call(base(), 'GET', '/v1/customers', undefined, { token: key.key }), 401, 'invalid_api_key');
    assert.equal((await call(base(), 'GET', '/v1/customers', undefined, { token: owner.key })).status, 200, 'the other keys still work');

    const other = await signUp(base());
    const foreign = await call(base(), 'DELETE', `/v1/api-keys/${owner.keyId}`, undefined, { token: other.token, idempotencyKey: randomUUID() });
    expectError(foreign, 403, 'cross_account_access_denied');
  });
});
