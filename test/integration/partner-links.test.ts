// Partner links by three-legged OAuth (DESIGN.md section 5c; SPEC.md section 5), driven as a
// browser drives them: open the authorize_url, read the partner's consent page, submit its form,
// follow the redirect to the service's callback. Then what must never link: denied consent, a
// replayed callback, a forged state, a code already spent, a redirect_uri that is not ours.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { partnerAccess } from '../../src/partner-links/access';
import { PARTNER_LINK_CALLBACK_PATH } from '../../src/partners/registry';
import { SecretVault } from '../../src/vault';
import { railsUrl, testService } from '../hooks';
import { createCustomer, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { browse, consent, ownerWithCustomer } from '../support/partner-links';
import { controlHeaders } from '../support/secrets';

describe('partner links (three-legged OAuth)', () => {
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  let customerId: string;
  before(async () => {
    ({ owner, customerId } = await ownerWithCustomer(base()));
  });

  const createLink = (partner = 'fiat', customer = customerId, key = owner.key) =>
    call(base(), 'POST', `/v1/customers/${customer}/partner-links`, { partner }, { token: key, idempotencyKey: randomUUID() });
  const links = async () => (await call(base(), 'GET', `/v1/customers/${customerId}/partner-links`, undefined, { token: owner.key })).body.data;
  const linkRow = (id: string) => testService().runtime.db('partner_links').where('id', id).first();

  it('lets the master key link and list any customer\'s partners, acting for the customer\'s account', async () => {
    const master = testService().runtime.config.masterKey;
    const created = await createLink('chain', customerId, master);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const listed = await call(base(), 'GET', `/v1/customers/${customerId}/partner-links`, undefined, { token: master });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.ok(listed.body.data.some((link: { id: string }) => link.id === created.body.id));
    expectError(await createLink('chain', customerId, (await signUp(base())).key), 403, 'cross_account_access_denied', customerId);
  });

  it('links a customer: consent page, form, redirect, callback, active with sealed tokens', async () => {
    const created = await createLink('openbank');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual([created.body.status, created.body.partner, created.body.customer_id], ['pending', 'openbank', customerId]);
    const authorize = new URL(created.body.authorize_url);
    assert.equal(authorize.origin + authorize.pathname, `${railsUrl()}/openbank/oauth/authorize`);
    assert.deepEqual([authorize.searchParams.get('response_type'), authorize.searchParams.get('client_id')], ['code', testService().config.partnerClientId]);
    assert.equal(authorize.searchParams.get('redirect_uri'), `${base()}${PARTNER_LINK_CALLBACK_PATH}`);
    assert.ok((authorize.searchParams.get('state') ?? '').length >= 40, 'an unguessable state');

    const callback = await consent(created.body.authorize_url, 'approve');
    assert.ok(callback.startsWith(`${base()}${PARTNER_LINK_CALLBACK_PATH}?`), callback);
    const landed = await browse(callback);
    assert.equal(landed.status, 200, landed.html);
    assert.match(landed.html, /Account linked/);

    const [listed] = (await links()).filter((l: { id: string }) => l.id === created.body.id);
    assert.deepEqual([listed.status, listed.authorize_url, listed.failure], ['active', null, null]);
    assert.ok(listed.linked_at);

    const row = await linkRow(created.body.id);
    assert.equal(row.state_hash, null, 'the state is spent');
    assert.doesNotMatch(row.access_token_sealed, /at_/, 'no token in the clear');
    const vault = new SecretVault(testService().config.partnerTokenSecret, 'partner-token-vault');
    const token = vault.open(row.access_token_sealed);
    const probe = await call(`${railsUrl()}/openbank`, 'GET', '/v1/payments/openbank_000000000000000000000000', undefined, { token });
    assert.equal(probe.status, 404, 'the sealed token works at the partner');
    assert.throws(() => new SecretVault('another secret', 'partner-token-vault').open(row.access_token_sealed), 'another key cannot open it');

    const replayed = await browse(callback);
    assert.equal(replayed.status, 404, 'a callback is good once: the link request is gone');
    assert.match(replayed.html, /unknown or was already used/);
    assert.equal((await linkRow(created.body.id)).status, 'active');
  });

  it('keeps the link request when the partner does not answer the code exchange: 503, and a reload links it', async function () {
    this.timeout(40_000);
    const created = await createLink('openbank');
    const callback = await consent(created.body.authorize_url, 'approve');
    const outage = await call(`${railsUrl()}/openbank`, 'POST', '/_control/outage?ms=60000', {}, { headers: controlHeaders() });
    assert.equal(outage.status, 200, JSON.stringify(outage.body));
    const away = await browse(callback);
    assert.equal(away.status, 503, away.html);
    assert.match(away.html, /Reload this page/);
    assert.equal((await linkRow(created.body.id)).status, 'pending', 'the link request stands');
    // The partner comes back (the outage ended by its control, not waited out).
    const back = await call(`${railsUrl()}/openbank`, 'POST', '/_control/outage?ms=0', {}, { headers: controlHeaders() });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    const landed = await browse(callback);
    assert.equal(landed.status, 200, landed.html);
    assert.equal((await linkRow(created.body.id)).status, 'active');
  });

  it('ends in a failed link, with the reason, when consent is denied', async () => {
    const created = await createLink();
    const callback = await consent(created.body.authorize_url, 'deny');
    assert.equal(new URL(callback).searchParams.get('error'), 'access_denied');
    const landed = await browse(callback);
    assert.equal(landed.status, 400);
    assert.match(landed.html, /Account not linked/);
    const row = await linkRow(created.body.id);
    assert.deepEqual([row.status, row.failure_code, row.access_token_sealed], ['failed', 'access_denied', null]);
  });

  it('ignores a forged state, and a code already spent fails the link it is sent for', async () => {
    const first = await createLink();
    const firstCallback = new URL(await consent(first.body.authorize_url, 'approve'));
    const forged = new URL(firstCallback);
    forged.searchParams.set('state', 'x'.repeat(43));
    assert.equal((await browse(forged.toString())).status, 404, 'a state it never issued is an unknown link request');
    assert.equal((await linkRow(first.body.id)).status, 'pending', 'a forged state changes nothing');
    assert.equal((await browse(firstCallback.toString())).status, 200);

    const second = await createLink();
    const secondCallback = new URL(await consent(second.body.authorize_url, 'approve'));
    secondCallback.searchParams.set('code', firstCallback.searchParams.get('code')!); // spent by the first link
    const landed = await browse(secondCallback.toString());
    assert.equal(landed.status, 400);
    const row = await linkRow(second.body.id);
    assert.deepEqual([row.status, row.failure_code], ['failed', 'partner_refused']);
  });

  it('never reaches the partner\'s consent for a redirect_uri that is not the registered one', async () => {
    const created = await createLink();
    const tampered = new URL(created.body.authorize_url);
    tampered.searchParams.set('redirect_uri', 'https://attacker.example.test/callback');
    const answered = await browse(tampered.toString());
    assert.deepEqual([answered.status, answered.location], [400, null]);
    assert.equal((await linkRow(created.body.id)).status, 'pending');
  });

  it('refreshes tokens near expiry with the refresh flow, and forgets them on revoke', async () => {
    const created = await createLink('chain');
    assert.equal((await browse(await consent(created.body.authorize_url, 'approve'))).status, 200);
    const service = partnerAccess(testService().config, testService().runtime.db, railsUrl(), base).links;
    const before = await linkRow(created.body.id);
    await call(`${railsUrl()}/chain`, 'POST', '/_control/expire-tokens', undefined, { headers: controlHeaders() });
    await testService().runtime.db('partner_links').where('id', created.body.id).update({ access_token_expires_at: new Date(Date.now() - 1000) });
    const fresh = await service.accessToken(await linkRow(created.body.id));
    const probe = await call(`${railsUrl()}/chain`, 'GET', '/v1/payments/chain_000000000000000000000000', undefined, { token: fresh });
    assert.equal(probe.status, 404, 'the refreshed token works');
    const after = await linkRow(created.body.id);
    assert.notEqual(after.refresh_token_sealed, before.refresh_token_sealed, 'the refresh token rotated');
    assert.ok(after.access_token_expires_at.getTime() > Date.now());

    const revoked = await call(base(), 'DELETE', `/v1/customers/${customerId}/partner-links/${created.body.id}`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    assert.equal(revoked.body.status, 'revoked');
    const row = await linkRow(created.body.id);
    assert.deepEqual([row.access_token_sealed, row.refresh_token_sealed], [null, null]);
  });

  it('lists the linked customer\'s funding methods, riding out an expired and a spuriously refused token', async () => {
    const customer = (await createCustomer(base(), owner.key)).body.id;
    const link = await createLink('openbank', customer);
    assert.equal((await browse(await consent(link.body.authorize_url, 'approve'))).status, 200);
    const list = () => call(base(), 'GET', `/v1/customers/${customer}/funding-methods?partner=openbank`, undefined, { token: owner.key });
    const stats = async () => (await call(`${railsUrl()}/openbank`, 'GET', '/_control/stats', undefined, { headers: controlHeaders() })).body;

    const first = await list();
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body.data.map((m: { kind: string; currency: string; default: boolean }) => [m.kind, m.currency, m.default]),
      [['bank', 'USD', true], ['bank', 'EUR', false], ['bank', 'GBP', false]]);

    await call(`${railsUrl()}/openbank`, 'POST', '/_control/invalid-token?count=1', undefined, { headers: controlHeaders() });
    const tokensBefore = (await stats()).token_requests;
    assert.deepEqual((await list()).body, first.body, 'a spurious "Invalid token" is retried with the same token');
    assert.equal((await stats()).token_requests, tokensBefore, 'without a renewal');

    await call(`${railsUrl()}/openbank`, 'POST', '/_control/expire-tokens', undefined, { headers: controlHeaders() });
    assert.deepEqual((await list()).body, first.body, 'an expired token is refreshed without the caller noticing');
    assert.equal((await stats()).token_requests, tokensBefore + 1, 'by one refresh');

    expectError(await call(base(), 'GET', `/v1/customers/${customer}/funding-methods?partner=fiat`, undefined, { token: owner.key }), 400, 'customer_not_linked', 'customer_id');
    expectError(await call(base(), 'GET', `/v1/customers/${customer}/funding-methods?partner=nowhere`, undefined, { token: owner.key }), 400, 'invalid_partner', 'partner');
  });

  it('checks the partner, the customer and the caller', async () => {
    expectError(await createLink('nowhere'), 400, 'invalid_partner', 'partner');
    expectError(await createLink('fiat', randomUUID()), 404, 'resource_not_found');
    const stranger = await signUp(base());
    expectError(await createLink('fiat', customerId, stranger.key), 403, 'cross_account_access_denied');
    const listed = await call(base(), 'GET', `/v1/customers/${customerId}/partner-links`, undefined, { token: stranger.key });
    expectError(listed, 403, 'cross_account_access_denied');
  });
});
