// The mock rails as the outside partners they stand for: the OAuth 2.0 of SPEC.md section 5
// (Partner-side OAuth 2.0) and the payment API with the sandbox scenarios a caller asks for. Each describe
// block runs its own server on a free port.
import assert from 'node:assert/strict';
import { ownRailsBooks } from '../support/service';
import { testService } from '../hooks';
import { startMockRails, type MockRails, type MockRailsOptions } from '../../src/mock-rails/server';
import { call, eventually, type JsonResponse } from '../support/http';
import { uniqueReference } from '../support/partner-links';
import { controlHeaders, controlSecret } from '../support/secrets';
import { today } from '../support/days';

const CLIENT_ID = 'client_mock_rails_test';
const CLIENT_SECRET = 'secret_mock_rails_test';
const REDIRECT_URI = 'https://app.example.test/oauth/callback';
const REDIRECT_URI_OTHER = 'http://127.0.0.1:9/callback?tenant=a b';
const CHAIN_CONFIRM_MS = 150;

function railsOptions(overrides: Partial<MockRailsOptions> = {}): MockRailsOptions {
  return {
    ...ownRailsBooks(), host: '127.0.0.1', port: 0, tokenTtlSeconds: 60, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, controlSecret: controlSecret(),
    redirectUris: [REDIRECT_URI, REDIRECT_URI_OTHER], chainConfirmMs: CHAIN_CONFIRM_MS, ...overrides,
  };
}

function basic(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
}

/** POST /<slug>/oauth/token with a form body, Basic client auth unless `authorization` is given. */
async function tokenRequest(partnerUrl: string, form: Record<string, string>, options: { query?: string; authorization?: string | null } = {}): Promise<JsonResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const authorization = options.authorization === undefined ? basic(CLIENT_ID, CLIENT_SECRET) : options.authorization;
  if (authorization !== null) headers.authorization = authorization;
  return call(partnerUrl, 'POST', `/oauth/token${options.query ?? ''}`, undefined, { headers, raw: new URLSearchParams(form).toString() });
}

async function clientCredentialsToken(partnerUrl: string): Promise<string> {
  const response = await tokenRequest(partnerUrl, { grant_type: 'client_credentials', scope: 'all' });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.access_token;
}

/** The consent page of an authorization request, and the form a person would submit on it. */
async function consentPage(partnerUrl: string, query: Record<string, string>): Promise<{ url: string; html: string; consentToken: string }> {
  const url = `${partnerUrl}/oauth/authorize?${new URLSearchParams(query)}`;
  const response = await fetch(url, { redirect: 'manual' });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  const html = await response.text();
  const consentToken = /name="consent_token" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(consentToken, 'the page carries its form token');
  return { url, html, consentToken };
}

/** Submits the consent form as a browser would: a form-encoded POST to the page's own address. */
function submitConsent(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
}

/** Step 1 of the three-legged flow: the person approves, and the partner redirects back with a code. */
async function authorizationCode(partnerUrl: string, redirectUri: string): Promise<string> {
  const page = await consentPage(partnerUrl, { client_id: CLIENT_ID, redirect_uri: redirectUri, response_type: 'code' });
  const response = await submitConsent(page.url, { consent_token: page.consentToken, decision: 'approve' });
  assert.equal(response.status, 302);
  const location = new URL(response.headers.get('location') ?? '');
  const code = location.searchParams.get('code');
  assert.ok(code, 'the redirect carries a code');
  return code;
}

describe('mock rails: partner OAuth 2.0', () => {
  let rails: MockRails;
  let fiatUrl: string;

  before(async () => {
    rails = await startMockRails(railsOptions());
    fiatUrl = `${rails.url}/fiat`;
  });
  after(async () => {
    await rails.stop();
  });

  it('answers health checks of every partner', async () => {
    for (const slug of ['fiat', 'chain', 'claimless', 'openbank']) {
      assert.equal((await call(rails.url, 'GET', `/${slug}/healthz`)).status, 200, slug);
    }
  });

  describe('client credentials', () => {
    it('issues a bearer token for the client itself', async () => {
      const response = await tokenRequest(fiatUrl, { grant_type: 'client_credentials', scope: 'all' });
      assert.equal(response.status, 200);
      assert.equal(response.body.token_type, 'bearer');
      assert.equal(response.body.scope, 'all');
      assert.equal(response.body.expires_in, 60);
      assert.equal(typeof response.body.access_token, 'string');
      assert.equal(typeof response.body.refresh_token, 'string');
      assert.ok(Number.isInteger(response.body.account_id));
      assert.ok(Number.isInteger(response.body.user_id));
    });

    it('rejects a wrong secret with 401 invalid_client', async () => {
      const response = await tokenRequest(fiatUrl, { grant_type: 'client_credentials', scope: 'all' }, { authorization: basic(CLIENT_ID, 'wrong') });
      assert.equal(response.status, 401);
      assert.deepEqual(response.body, { error: 'invalid_client', message: 'client authentication failed' });
    });

    it('rejects missing client authentication with 401 invalid_client', async () => {
      const response = await tokenRequest(fiatUrl, { grant_type: 'client_credentials', scope: 'all' }, { authorization: null });
      assert.equal(response.status, 401);
      assert.equal(response.body.error, 'invalid_client');
    });

    it('rejects an unknown grant type with 400 unsupported_grant_type', async () => {
      const response = await tokenRequest(fiatUrl, { grant_type: 'password', username: 'a', password: 'b' });
      assert.equal(response.status, 400);
      assert.equal(response.body.error, 'unsupported_grant_type');
    });
  });

  describe('authorization code (three-legged)', () => {
    it('redirects with a code that exchanges once for tokens', async () => {
      const code = await authorizationCode(fiatUrl, REDIRECT_URI);
      const exchanged = await tokenRequest(fiatUrl, { grant_type: 'authorization_code', scope: 'all', code, redirect_uri: REDIRECT_URI });
      assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
      assert.equal(exchanged.body.token_type, 'bearer');
      assert.equal((await call(fiatUrl, 'GET', '/v1/payments/fiat_000000000000000000000000', undefined, { token: exchanged.body.access_token })).status, 404);

      const reused = await tokenRequest(fiatUrl, { grant_type: 'authorization_code', scope: 'all', code, redirect_uri: REDIRECT_URI });
      assert.equal(reused.status, 400);
      assert.equal(reused.body.error, 'invalid_grant');
    });

    it('shows a consent page whose form posts back to it; deny redirects with access_denied and the state', async () => {
      const page = await consentPage(fiatUrl, { client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, response_type: 'code', state: 's-123' });
      assert.match(page.html, /<form method="post">/);
      assert.match(page.html, /name="decision" value="approve"/);
      assert.match(page.html, /name="decision" value="deny"/);
      const denied = await submitConsent(page.url, { consent_token: page.consentToken, decision: 'deny' });
      assert.equal(denied.status, 302);
      const location = new URL(denied.headers.get('location')!);
      assert.deepEqual([location.searchParams.get('error'), location.searchParams.get('state'), location.searchParams.get('code')], ['access_denied', 's-123', null]);
    });

    it('takes a consent form once, and only for the request it was shown for', async () => {
      const page = await consentPage(fiatUrl, { client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'a' });
      const elsewhere = `${fiatUrl}/oauth/authorize?${new URLSearchParams({ client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'b' })}`;
      assert.equal((await submitConsent(elsewhere, { consent_token: page.consentToken, decision: 'approve' })).status, 400, 'another request');
      const again = await consentPage(fiatUrl, { client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, response_type: 'code', state: 'a' });
      assert.equal((await submitConsent(again.url, { consent_token: again.consentToken, decision: 'approve' })).status, 302);
      assert.equal((await submitConsent(again.url, { consent_token: again.consentToken, decision: 'approve' })).status, 400, 'used once');
      assert.equal((await submitConsent(again.url, { decision: 'approve' })).status, 400, 'no token');
    });

    it('gives each approval a user of its own', async () => {
      const users = [];
      for (let i = 0; i < 2; i++) {
        const code = await authorizationCode(fiatUrl, REDIRECT_URI);
        users.push((await tokenRequest(fiatUrl, { grant_type: 'authorization_code', scope: 'all', code, redirect_uri: REDIRECT_URI })).body.user_id);
      }
      assert.notEqual(users[0], users[1]);
    });

    it('keeps the query of a registered redirect_uri and matches it after decoding', async () => {
      const code = await authorizationCode(fiatUrl, REDIRECT_URI_OTHER);
      const exchanged = await tokenRequest(fiatUrl, { grant_type: 'authorization_code', scope: 'all', code, redirect_uri: REDIRECT_URI_OTHER });
      assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
    });

    it('refuses to exchange a code for a redirect_uri other than the one it was issued for', async () => {
      const code = await authorizationCode(fiatUrl, REDIRECT_URI);
      const response = await tokenRequest(fiatUrl, { grant_type: 'authorization_code', scope: 'all', code, redirect_uri: REDIRECT_URI_OTHER });
      assert.equal(response.status, 400);
      assert.equal(response.body.error, 'invalid_grant');
    });

    it('refuses a code it never issued', async () => {
      const response = await tokenRequest(fiatUrl, { grant_type: 'authorization_code', scope: 'all', code: 'code_made_up', redirect_uri: REDIRECT_URI });
      assert.equal(response.status, 400);
      assert.equal(response.body.error, 'invalid_grant');
    });

    // Rejections of the authorize step, in the order they are checked.
    const authorizeRejections: Array<[why: string, query: Record<string, string>, error: string]> = [
      ['unknown client_id', { client_id: 'someone_else', redirect_uri: REDIRECT_URI, response_type: 'code' }, 'invalid_client'],
      ['unregistered redirect_uri', { client_id: CLIENT_ID, redirect_uri: 'https://evil.example.test/cb', response_type: 'code' }, 'invalid_request'],
      ['redirect_uri that only shares a prefix', { client_id: CLIENT_ID, redirect_uri: `${REDIRECT_URI}/more`, response_type: 'code' }, 'invalid_request'],
      ['response_type other than code', { client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, response_type: 'token' }, 'unsupported_response_type'],
    ];
    for (const [why, query, error] of authorizeRejections) {
      it(`answers authorize with 400 ${error} for an ${why}`, async () => {
        const response = await fetch(`${fiatUrl}/oauth/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' });
        assert.equal(response.status, 400);
        assert.equal(((await response.json()) as { error: string }).error, error);
      });
    }
  });

  describe('refresh', () => {
    it('issues a working access token and retires the refresh token it used', async () => {
      const first = await tokenRequest(fiatUrl, { grant_type: 'client_credentials', scope: 'all' });
      const oldRefreshToken: string = first.body.refresh_token;
      const refreshed = await tokenRequest(fiatUrl, { grant_type: 'refresh_token' }, { query: `?refresh_token=${encodeURIComponent(oldRefreshToken)}` });
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      assert.notEqual(refreshed.body.access_token, first.body.access_token);
      assert.notEqual(refreshed.body.refresh_token, oldRefreshToken);
      const submitted = await call(fiatUrl, 'POST', '/v1/payments', { reference: uniqueReference(), amount: '1.00', currency: 'USD' }, { token: refreshed.body.access_token });
      assert.equal(submitted.status, 201);

      const reused = await tokenRequest(fiatUrl, { grant_type: 'refresh_token' }, { query: `?refresh_token=${encodeURIComponent(oldRefreshToken)}` });
      assert.equal(reused.status, 400);
      assert.equal(reused.body.error, 'invalid_grant');
    });
  });

  describe('bearer tokens on the API', () => {
    it('answers 401 invalid_token without a token and with an unknown one', async () => {
      const without = await call(fiatUrl, 'POST', '/v1/payments', { reference: uniqueReference(), amount: '1.00', currency: 'USD' });
      assert.equal(without.status, 401);
      assert.equal(without.body.error, 'invalid_token');
      const unknown = await call(fiatUrl, 'GET', '/v1/payments/fiat_000000000000000000000000', undefined, { token: 'at_made_up' });
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.error, 'invalid_token');
    });

    it('keeps a token space per partner: a fiat token is unknown to chain', async () => {
      const token = await clientCredentialsToken(fiatUrl);
      const response = await call(`${rails.url}/chain`, 'GET', '/v1/payments/chain_000000000000000000000000', undefined, { token });
      assert.equal(response.status, 401);
      assert.equal(response.body.error, 'invalid_token');
    });

    it('answers 401 token_expired once the sandbox control expired the tokens', async () => {
      const openbankUrl = `${rails.url}/openbank`;
      const token = await clientCredentialsToken(openbankUrl);
      assert.equal((await call(openbankUrl, 'GET', '/v1/payments/openbank_000000000000000000000000', undefined, { token })).status, 404);
      assert.equal((await call(openbankUrl, 'POST', '/_control/expire-tokens', undefined, { headers: controlHeaders() })).status, 200);
      const response = await call(openbankUrl, 'GET', '/v1/payments/openbank_000000000000000000000000', undefined, { token });
      assert.equal(response.status, 401);
      assert.equal(response.body.error, 'token_expired');
    });
  });
});

describe('mock rails: tokens expire by time', () => {
  let rails: MockRails;

  before(async () => {
    rails = await startMockRails(railsOptions({ tokenTtlSeconds: 1 }));
  });
  after(async () => {
    await rails.stop();
  });

  it('answers 401 token_expired after expires_in seconds', async () => {
    const fiatUrl = `${rails.url}/fiat`;
    const token = await clientCredentialsToken(fiatUrl);
    const expired = await eventually(async () => {
      const response = await call(fiatUrl, 'GET', '/v1/payments/fiat_000000000000000000000000', undefined, { token });
      return response.status === 401 ? response : undefined;
    }, 5_000, 'the token to expire');
    assert.equal(expired.body.error, 'token_expired');
  });
});

describe('mock rails: payments', () => {
  let rails: MockRails;
  const tokens: Record<string, string> = {};

  async function submit(slug: string, body: Record<string, unknown>): Promise<JsonResponse> {
    return call(`${rails.url}/${slug}`, 'POST', '/v1/payments', body, { token: tokens[slug] });
  }

  async function payment(slug: string, id: string): Promise<JsonResponse> {
    return call(`${rails.url}/${slug}`, 'GET', `/v1/payments/${id}`, undefined, { token: tokens[slug] });
  }

  async function statusBecomes(slug: string, id: string, status: string): Promise<JsonResponse> {
    return eventually(async () => {
      const response = await payment(slug, id);
      return response.body.status === status ? response : undefined;
    }, 5_000, `${id} to become ${status}`);
  }

  before(async () => {
    rails = await startMockRails(railsOptions());
    for (const slug of ['fiat', 'chain', 'claimless', 'openbank']) tokens[slug] = await clientCredentialsToken(`${rails.url}/${slug}`);
  });
  after(async () => {
    await rails.stop();
  });

  it('publishes to the client a daily statement of every payment settled on its accounts, its own transfers included, and to nobody else', async () => {
    const fiatUrl = `${rails.url}/fiat`;
    const code = await authorizationCode(fiatUrl, REDIRECT_URI);
    const userToken = (await tokenRequest(fiatUrl, { grant_type: 'authorization_code', scope: 'all', code, redirect_uri: REDIRECT_URI })).body.access_token;
    const customers = await call(fiatUrl, 'POST', '/v1/payments', { reference: uniqueReference(), amount: '12.5', currency: 'EUR' }, { token: userToken });
    const fee = await call(fiatUrl, 'POST', '/v1/payments', { reference: uniqueReference(), amount: '3.00', currency: 'EUR', scenario: 'statement_fee' }, { token: userToken });
    const clients = await submit('fiat', { reference: uniqueReference(), amount: '7.00', currency: 'EUR' });
    const twice = await call(fiatUrl, 'POST', '/v1/payments', { reference: uniqueReference(), amount: '1.00', currency: 'EUR', scenario: 'statement_duplicate' }, { token: userToken });
    const batched: JsonResponse[] = [];
    for (const amount of ['2.00', '4.25']) batched.push(await call(fiatUrl, 'POST', '/v1/payments', { reference: uniqueReference(), amount, currency: 'EUR', scenario: 'statement_batched' }, { token: userToken }));
    const day = today();
    const statement = await call(fiatUrl, 'GET', `/v1/statements/${day}`, undefined, { token: tokens.fiat });
    assert.equal(statement.status, 200, JSON.stringify(statement.body));
    const line = statement.body.lines.find((l: { reference: string }) => l.reference === customers.body.id);
    assert.deepEqual(line, {
      id: `stl_${customers.body.id}`, type: 'payout', reference: customers.body.id, client_reference: customers.body.reference,
      amount: '-12.50', fee: '0.00', net: '-12.50', currency: 'EUR', value_date: day,
    });
    const charged = statement.body.lines.find((l: { reference: string }) => l.reference === fee.body.id);
    assert.deepEqual([charged.amount, charged.fee, charged.net], ['-3.00', '0.50', '-3.50']);
    const sent = statement.body.lines.find((l: { reference: string }) => l.reference === clients.body.id);
    assert.deepEqual(sent && [sent.type, sent.client_reference, sent.amount, sent.net], ['payout', clients.body.reference, '-7.00', '-7.00'],
      'the transfers the client sends under its own credentials are on its statement too');
    // The partner answers what it holds under a reference of ours, and says so when it holds none.
    const found = await call(fiatUrl, 'GET', `/v1/payments?reference=${encodeURIComponent(clients.body.reference)}`, undefined, { token: tokens.fiat });
    assert.deepEqual([found.status, found.body.id], [200, clients.body.id]);
    const none = await call(fiatUrl, 'GET', `/v1/payments?reference=${uniqueReference()}`, undefined, { token: tokens.fiat });
    assert.deepEqual([none.status, none.body.error], [404, 'not_found']);
    assert.deepEqual(statement.body.lines.filter((l: { reference: string }) => l.reference === twice.body.id).map((l: { id: string }) => l.id), [`stl_${twice.body.id}`, `stl_${twice.body.id}_2`]);
    const batch = statement.body.lines.find((l: { type: string; currency: string }) => l.type === 'batch' && l.currency === 'EUR');
    assert.deepEqual([batch.amount, batch.net, batch.batch_size], ['-6.25', '-6.25', 2]);
    assert.deepEqual(batch.settles, batched.map((b) => b.body.id), 'a batch line lists the payments it settles');
    assert.ok(!statement.body.lines.some((l: { reference: string }) => batched.some((b) => b.body.id === l.reference)), 'a batched payment has no line of its own');
    assert.equal((await call(fiatUrl, 'GET', `/v1/statements/${day}`, undefined, { token: userToken })).status, 403, 'a customer may not read the client\'s statement');
    for (const bad of ['2026-13-45', '2026-02-30', 'yesterday']) {
      assert.equal((await call(fiatUrl, 'GET', `/v1/statements/${bad}`, undefined, { token: tokens.fiat })).status, 400, bad);
    }

    // Paged: a line at a time (a payment's two lines together), the pages are the statement, in
    // order, and the last says so.
    for (const limit of [1, 2, 3]) {
      const paged: Array<{ reference: string }> = [];
      for (let cursor: string | null = null, first = true; first || cursor !== null; first = false) {
        const goOn: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const page: { status: number; body: { lines: Array<{ reference: string }>; next_cursor: string | null } } = await call(fiatUrl, 'GET', `/v1/statements/${day}?limit=${limit}${goOn}`, undefined, { token: tokens.fiat });
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.ok(page.body.lines.length <= limit || page.body.lines.every((l) => l.reference === twice.body.id), `a page of ${page.body.lines.length} lines`);
        paged.push(...page.body.lines);
        cursor = page.body.next_cursor;
      }
      assert.deepEqual(paged, statement.body.lines, `pages of ${limit}`);
    }
    for (const bad of ['limit=0', 'limit=10001', 'limit=5&cursor=-1', 'limit=5&cursor=batch_x', 'limit=5&cursor=2026-01-01T00:00:00Z_x', 'limit=x']) {
      assert.equal((await call(fiatUrl, 'GET', `/v1/statements/${day}?${bad}`, undefined, { token: tokens.fiat })).status, 400, bad);
    }
  });

  it('fiat completes a payment in the submit response', async () => {
    const ref = uniqueReference();
    const response = await submit('fiat', { reference: ref, amount: '10', currency: 'EUR', beneficiary: { iban: 'DE00' }, metadata: { order: 1 } });
    assert.equal(response.status, 201);
    assert.match(response.body.id, /^fiat_[0-9a-f]{24}$/);
    assert.equal(response.body.reference, ref);
    assert.equal(response.body.amount, '10.00', 'amounts come back at the currency scale');
    assert.equal(response.body.currency, 'EUR');
    assert.equal(response.body.status, 'completed');
    assert.ok(!Number.isNaN(Date.parse(response.body.created_at)));
    assert.equal(response.body.tx_hash, undefined);
    assert.equal((await payment('fiat', response.body.id)).body.status, 'completed');
  });

  it('chain answers pending with a tx hash, and the payment completes once confirmed', async () => {
    const response = await submit('chain', { reference: uniqueReference(), amount: '25.5', currency: 'USDC' });
    assert.equal(response.status, 201);
    assert.equal(response.body.status, 'pending');
    assert.equal(response.body.amount, '25.500000');
    assert.match(response.body.tx_hash, /^0x[0-9a-f]{64}$/);
    const completed = await statusBecomes('chain', response.body.id, 'completed');
    assert.equal(completed.body.tx_hash, response.body.tx_hash);
  });

  it('claimless answers pending with a claim link: a page whose form the payee submits to claim, once', async () => {
    const response = await submit('claimless', { reference: uniqueReference(), amount: '40.00', currency: 'GBP' });
    assert.equal(response.status, 201);
    assert.equal(response.body.status, 'pending');
    assert.equal(response.body.claim_link, `${rails.url}/claimless/claim/${response.body.id}`);
    const page = await fetch(response.body.claim_link);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /40\.00 GBP/);
    assert.match(html, /<form method="post"><button type="submit" name="decision" value="claim">/);
    assert.equal((await payment('claimless', response.body.id)).body.status, 'pending', 'opening the page claims nothing');
    const claim = () => fetch(response.body.claim_link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=claim' });
    const claimed = await claim();
    assert.equal(claimed.status, 200);
    assert.match(await claimed.text(), /Claimed/);
    assert.equal((await payment('claimless', response.body.id)).body.status, 'completed');
    assert.equal((await claim()).status, 409, 'a claim link works once');
    assert.equal((await fetch(response.body.claim_link)).status, 410);
  });

  it('claimless: an unclaimed link expires by itself once its lifetime has passed', async () => {
    const shortLived = await startMockRails({ ...railsOptions(), claimTtlMs: 200 });
    try {
      const token = await clientCredentialsToken(`${shortLived.url}/claimless`);
      const submitted = await call(`${shortLived.url}/claimless`, 'POST', '/v1/payments', { reference: uniqueReference(), amount: '5.00', currency: 'USD' }, { token });
      assert.equal(submitted.body.status, 'pending');
      await eventually(async () => {
        const now = await call(`${shortLived.url}/claimless`, 'GET', `/v1/payments/${submitted.body.id}`, undefined, { token });
        return now.body.status === 'expired' ? true : undefined;
      }, 5_000, 'the link expires');
      assert.equal((await fetch(submitted.body.claim_link)).status, 410);
    } finally {
      await shortLived.stop();
    }
  });

  it('claimless: an unclaimed link expires (here at once, by the sandbox control)', async () => {
    const response = await submit('claimless', { reference: uniqueReference(), amount: '5.00', currency: 'USD' });
    const expired = await call(`${rails.url}/claimless`, 'POST', `/_control/expire-claim/${response.body.id}`, undefined, { headers: controlHeaders() });
    assert.deepEqual([expired.status, expired.body.status], [200, 'expired']);
    assert.equal((await payment('claimless', response.body.id)).body.status, 'expired');
    assert.equal((await fetch(response.body.claim_link)).status, 410);
  });

  it('stops a payment not paid yet by the sandbox control (reversed, its settlement no longer due); one that has ended is 409', async () => {
    const slow = await startMockRails({ ...railsOptions(), chainConfirmMs: 60_000 });
    try {
      const grant = await tokenRequest(`${slow.url}/openbank`, { grant_type: 'client_credentials' });
      const submitted = await call(`${slow.url}/openbank`, 'POST', '/v1/payments', { reference: uniqueReference(), amount: '8.00', currency: 'USD' }, { token: grant.body.access_token });
      assert.equal(submitted.body.status, 'authorized');
      const stopped = await call(`${slow.url}/openbank`, 'POST', `/_control/cancel/${submitted.body.id}`, undefined, { headers: controlHeaders() });
      assert.deepEqual([stopped.status, stopped.body.status], [200, 'reversed']);
      const read = await call(`${slow.url}/openbank`, 'GET', `/v1/payments/${submitted.body.id}`, undefined, { token: grant.body.access_token });
      assert.equal(read.body.status, 'reversed');
      const due = await testService().runtime.db('mock_rails.payments').where({ partner: 'openbank', id: submitted.body.id }).first('due_status');
      assert.equal(due.due_status, null, 'its settlement is no longer due');
      const again = await call(`${slow.url}/openbank`, 'POST', `/_control/cancel/${submitted.body.id}`, undefined, { headers: controlHeaders() });
      assert.deepEqual([again.status, again.body.error], [409, 'not_cancellable']);
    } finally {
      await slow.stop();
    }
  });

  it('openbank answers authorized, and the pay-in completes later', async () => {
    const response = await submit('openbank', { reference: uniqueReference(), amount: '75.00', currency: 'USD' });
    assert.equal(response.status, 201);
    assert.equal(response.body.status, 'authorized');
    await statusBecomes('openbank', response.body.id, 'completed');
  });

  it('returns the same payment for the same reference and never creates a second', async () => {
    const body = { reference: uniqueReference(), amount: '12.00', currency: 'USD' };
    const first = await submit('fiat', body);
    const again = await submit('fiat', { ...body, amount: '12' });
    assert.equal(first.status, 201);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first.body);
  });

  it('refuses a known reference with a different amount: 409 reference_conflict', async () => {
    const ref = uniqueReference();
    assert.equal((await submit('fiat', { reference: ref, amount: '12.00', currency: 'USD' })).status, 201);
    const conflict = await submit('fiat', { reference: ref, amount: '12.01', currency: 'USD' });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error, 'reference_conflict');
  });

  // Rejections of a submit, in the order they are checked.
  const rejections: Array<[why: string, slug: string, body: Record<string, unknown>, status: number, error: string]> = [
    ['a missing reference', 'fiat', { amount: '1.00', currency: 'USD' }, 400, 'invalid_request'],
    ['an amount sent as a JSON number', 'fiat', { reference: 'r', amount: 1, currency: 'USD' }, 400, 'invalid_request'],
    ['a negative amount', 'fiat', { reference: 'r', amount: '-1.00', currency: 'USD' }, 400, 'invalid_request'],
    ['a zero amount', 'fiat', { reference: 'r', amount: '0.00', currency: 'USD' }, 400, 'invalid_request'],
    ['a lower-case currency', 'fiat', { reference: 'r', amount: '1.00', currency: 'usd' }, 400, 'invalid_request'],
    ['a beneficiary that is not an object', 'fiat', { reference: 'r', amount: '1.00', currency: 'USD', beneficiary: 'x' }, 400, 'invalid_request'],
    ['a stablecoin on fiat', 'fiat', { reference: 'r', amount: '1.00', currency: 'USDC' }, 400, 'unsupported_currency'],
    ['a fiat currency on chain', 'chain', { reference: 'r', amount: '1.00', currency: 'EUR' }, 400, 'unsupported_currency'],
    ['an unknown currency on claimless', 'claimless', { reference: 'r', amount: '1.00', currency: 'JPY' }, 400, 'unsupported_currency'],
    ['sub-cent precision on fiat', 'fiat', { reference: 'r', amount: '1.001', currency: 'USD' }, 400, 'invalid_request'],
    ['more than 6 decimals on chain', 'chain', { reference: 'r', amount: '1.0000001', currency: 'USDC' }, 400, 'invalid_request'],
  ];
  for (const [why, slug, body, status, error] of rejections) {
    it(`rejects ${why}: ${status} ${error}`, async () => {
      const response = await submit(slug, body);
      assert.equal(response.status, status, JSON.stringify(response.body));
      assert.equal(response.body.error, error);
    });
  }

  it('returns part of a completed payment as a payment of its own, up to the payment, refusing in order what it cannot return', async () => {
    const returnOf = (slug: string, id: string, body: Record<string, unknown>) => call(`${rails.url}/${slug}`, 'POST', `/v1/payments/${id}/returns`, body, { token: tokens[slug] });
    const paid = (await submit('fiat', { reference: uniqueReference(), amount: '10.00', currency: 'USD' })).body;
    const first = await returnOf('fiat', paid.id, { reference: uniqueReference(), amount: '6.00', currency: 'USD' });
    assert.deepEqual([first.status, first.body.status, first.body.returns, first.body.amount], [201, 'completed', paid.id, '6.00'], JSON.stringify(first.body));
    assert.deepEqual((await returnOf('fiat', paid.id, { reference: first.body.reference, amount: '6.00', currency: 'USD' })).body, first.body, 'the same reference answers the same return');
    const pending = (await submit('fiat', { reference: uniqueReference(), amount: '5.00', currency: 'USD', scenario: 'reverse' })).body;
    const refusals: Array<[why: string, id: string, body: Record<string, unknown>, status: number, error: string]> = [
      ['a missing reference', paid.id, { amount: '1.00', currency: 'USD' }, 400, 'invalid_request'],
      ['a payment it never made', 'fiat_ffffffffffffffffffffffff', { reference: uniqueReference(), amount: '1.00', currency: 'USD' }, 404, 'not_found'],
      ['a payment not completed', pending.id, { reference: uniqueReference(), amount: '1.00', currency: 'USD' }, 409, 'not_returnable'],
      ['a return itself', first.body.id, { reference: uniqueReference(), amount: '1.00', currency: 'USD' }, 409, 'not_returnable'],
      ['another currency than the payment\'s', paid.id, { reference: uniqueReference(), amount: '1.00', currency: 'EUR' }, 400, 'invalid_request'],
      ['more than is left of the payment', paid.id, { reference: uniqueReference(), amount: '4.01', currency: 'USD' }, 422, 'return_exceeded'],
    ];
    for (const [why, id, body, status, error] of refusals) {
      const refused = await returnOf('fiat', id, body);
      assert.deepEqual([refused.status, refused.body.error], [status, error], `${why}: ${JSON.stringify(refused.body)}`);
    }
    assert.equal((await returnOf('fiat', paid.id, { reference: uniqueReference(), amount: '4.00', currency: 'USD' })).status, 201, 'all that is left');

    const coins = (await submit('chain', { reference: uniqueReference(), amount: '3.000000', currency: 'USDC' })).body;
    await statusBecomes('chain', coins.id, 'completed');
    const back = await returnOf('chain', coins.id, { reference: uniqueReference(), amount: '1.500000', currency: 'USDC' });
    assert.deepEqual([back.status, back.body.status], [201, 'pending'], 'a chain return waits for its confirmation, as a payment does');
    await statusBecomes('chain', back.body.id, 'completed');
    const statement = await call(`${rails.url}/chain`, 'GET', `/v1/statements/${new Date().toISOString().slice(0, 10)}`, undefined, { token: tokens.chain });
    const line = statement.body.lines.find((l: { reference: string }) => l.reference === back.body.id);
    assert.deepEqual([line?.type, line?.amount, line?.returns, line?.client_reference], ['return', '1.500000', coins.id, back.body.reference], 'a return credits the client');
  });

  it('answers 404 not_found for a payment id it never issued', async () => {
    const response = await payment('fiat', 'fiat_ffffffffffffffffffffffff');
    assert.equal(response.status, 404);
    assert.equal(response.body.error, 'not_found');
  });

  describe('sandbox scenarios, asked for by name', () => {
    /** Submits `body` to `rail` twice; both answers are `status` with `error`. */
    const refusedTwice = async (rail: string, body: Record<string, unknown>, status: number, error: string): Promise<JsonResponse[]> => {
      const answers: JsonResponse[] = [];
      for (let attempt = 1; attempt <= 2; attempt += 1) {
        const response = await submit(rail, body);
        assert.deepEqual([response.status, response.body.error], [status, error], `attempt ${attempt}`);
        answers.push(response);
      }
      return answers;
    };

    it('outage: two 503s with Retry-After 0, then the payment', async () => {
      const body = { reference: uniqueReference(), amount: '10.13', currency: 'USD', scenario: 'outage' };
      const refused = await refusedTwice('fiat', body, 503, 'temporarily_unavailable');
      assert.deepEqual(refused.map((response) => response.headers.get('retry-after')), ['0', '0']);
      const third = await submit('fiat', body);
      assert.equal(third.status, 201);
      assert.equal(third.body.status, 'completed');
      assert.equal((await submit('fiat', body)).status, 200, 'later submits find the payment');
    });

    it('lost_answer: the first submit creates the payment but answers 500; the next submit of the reference returns it', async () => {
      const body = { reference: uniqueReference(), amount: '10.55', currency: 'USD', scenario: 'lost_answer' };
      const lost = await submit('fiat', body);
      assert.equal(lost.status, 500);
      assert.equal(lost.body.error, 'internal');
      const found = await submit('fiat', body);
      assert.equal(found.status, 200, 'the payment exists: a replay, not a new payment');
      assert.equal(found.body.reference, body.reference);
      assert.equal(found.body.amount, '10.55');
      assert.equal((await submit('fiat', body)).body.id, found.body.id, 'one payment for the reference');
    });

    it('decline: 422 declined on every submit, and no payment', async () => {
      const body = { reference: uniqueReference(), amount: '250.66', currency: 'GBP', scenario: 'decline' };
      for (const response of await refusedTwice('fiat', body, 422, 'declined')) assert.equal(typeof response.body.message, 'string');
    });

    it('error: 500 internal on every submit', async () => {
      const body = { reference: uniqueReference(), amount: '0.770000', currency: 'EURC', scenario: 'error' };
      await refusedTwice('chain', body, 500, 'internal');
    });

    it('reverse: accepted as pending even on fiat, then reversed, never completed', async () => {
      const response = await submit('fiat', { reference: uniqueReference(), amount: '5.99', currency: 'USD', scenario: 'reverse' });
      assert.equal(response.status, 201);
      assert.equal(response.body.status, 'pending');
      await statusBecomes('fiat', response.body.id, 'reversed');
    });

    it('without a scenario, amounts whose cents once meant a failure succeed', async () => {
      for (const amount of ['10.13', '10.55', '10.66', '10.77', '10.99']) {
        const response = await submit('fiat', { reference: uniqueReference(), amount, currency: 'USD' });
        assert.deepEqual([response.status, response.body.status], [201, 'completed'], amount);
      }
    });

    it('refuses an unknown scenario with 400 invalid_request, and creates nothing', async () => {
      const body = { reference: uniqueReference(), amount: '1.00', currency: 'USD', scenario: 'explode' };
      const response = await submit('fiat', body);
      assert.deepEqual([response.status, response.body.error], [400, 'invalid_request']);
      assert.equal((await submit('fiat', { ...body, scenario: undefined })).status, 201, 'the reference was not taken');
    });
  });
});

describe('mock rails: books that outlive a restart', () => {
  const options = railsOptions();
  let rails: MockRails;

  before(async () => {
    rails = await startMockRails(options);
  });
  after(async () => {
    await rails.stop();
  });

  /** Stops the rails and starts them again with the same books, on a new port. */
  async function restart(): Promise<void> {
    await rails.stop();
    rails = await startMockRails(options);
  }

  it('keeps payments, statements, grants and end users across a restart', async () => {
    const url = () => `${rails.url}/openbank`;
    const clientToken = await clientCredentialsToken(url());
    const grant = (await tokenRequest(url(), { grant_type: 'authorization_code', scope: 'all', code: await authorizationCode(url(), REDIRECT_URI), redirect_uri: REDIRECT_URI })).body;
    const payIn = await call(url(), 'POST', '/v1/payments', { reference: uniqueReference(), amount: '25.00', currency: 'USD' }, { token: grant.access_token });
    assert.equal(payIn.status, 201, JSON.stringify(payIn.body));
    const batched = await call(url(), 'POST', '/v1/payments', { reference: uniqueReference(), amount: '4.00', currency: 'USD', scenario: 'statement_batched' }, { token: grant.access_token });
    const settled = (id: string) => eventually(async () => ((await call(url(), 'GET', `/v1/payments/${id}`, undefined, { token: clientToken })).body.status === 'completed' ? true : undefined), 5_000, `${id} to settle`);
    await settled(payIn.body.id);
    await settled(batched.body.id);
    const day = today();
    const before = await call(url(), 'GET', `/v1/statements/${day}`, undefined, { token: clientToken });
    assert.equal(before.status, 200);
    assert.deepEqual(before.body.lines.map((l: { type: string }) => l.type), ['pay_in', 'batch']);
    const late = await call(url(), 'POST', '/v1/payments', { reference: uniqueReference(), amount: '6.00', currency: 'USD' }, { token: grant.access_token });
    assert.equal(late.body.status, 'authorized', 'it settles later');

    await restart();

    await settled(late.body.id);
    const after = await call(url(), 'GET', `/v1/statements/${day}`, undefined, { token: clientToken });
    assert.equal(after.status, 200, 'the client\'s token is still good');
    const lateLine = after.body.lines.find((l: { reference: string }) => l.reference === late.body.id);
    assert.equal(lateLine?.amount, '6.00', 'the payment made just before the restart settles onto the statement');
    assert.deepEqual(after.body.lines.filter((l: { reference: string }) => l !== lateLine), before.body.lines, 'the rest of the statement is the same');
    const again = await call(url(), 'GET', `/v1/payments/${payIn.body.id}`, undefined, { token: grant.access_token });
    assert.deepEqual(again.body, { ...payIn.body, status: 'completed' }, 'the payment is as it was');
    const retry = await call(url(), 'POST', '/v1/payments', { reference: payIn.body.reference, amount: '25.00', currency: 'USD' }, { token: grant.access_token });
    assert.deepEqual([retry.status, retry.body.id], [200, payIn.body.id], 'a retry after the restart finds the payment by its reference');
    const refreshed = await tokenRequest(url(), { grant_type: 'refresh_token' }, { query: `?refresh_token=${encodeURIComponent(grant.refresh_token)}` });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal(refreshed.body.user_id, grant.user_id, 'the refresh token still stands for the same customer');
    const next = (await tokenRequest(url(), { grant_type: 'authorization_code', scope: 'all', code: await authorizationCode(url(), REDIRECT_URI), redirect_uri: REDIRECT_URI })).body;
    assert.equal(next.user_id, grant.user_id + 1, 'the next customer gets a new number, not one already given');
  });

  it('forgets nothing a pending payment is waiting for: it settles on time after a restart', async () => {
    const url = () => `${rails.url}/chain`;
    const token = await clientCredentialsToken(url());
    const submitted = await call(url(), 'POST', '/v1/payments', { reference: uniqueReference(), amount: '5.000000', currency: 'USDC' }, { token });
    assert.equal(submitted.body.status, 'pending');
    await restart();
    const confirmed = await eventually(async () => {
      const now = await call(url(), 'GET', `/v1/payments/${submitted.body.id}`, undefined, { token });
      return now.body.status === 'completed' ? now.body : undefined;
    }, 5_000, 'the confirmation');
    assert.equal(confirmed.tx_hash, submitted.body.tx_hash);
  });

  it('keeps each book apart: other rails in the same database see none of these payments', async () => {
    const other = await startMockRails(railsOptions());
    try {
      const token = await clientCredentialsToken(`${rails.url}/fiat`);
      const made = await call(`${rails.url}/fiat`, 'POST', '/v1/payments', { reference: uniqueReference(), amount: '1.00', currency: 'USD' }, { token });
      const otherToken = await clientCredentialsToken(`${other.url}/fiat`);
      assert.equal((await call(`${other.url}/fiat`, 'GET', `/v1/payments/${made.body.id}`, undefined, { token: otherToken })).status, 404);
      assert.equal((await call(`${other.url}/fiat`, 'GET', '/v1/payments/x', undefined, { token })).status, 401, 'a token of one book is unknown to another');
    } finally {
      await other.stop();
    }
  });
});
