// Webhook endpoints (DESIGN.md section 5d): created with a secret shown once and sealed at rest,
// listed, read, updated, disabled, deleted, and their secret rotated with the previous one kept
// signing for 24 hours. Secret keys, webhooks-scoped restricted keys and sessions manage them;
// publishable keys cannot even read them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { isPrivateAddress } from '../../src/webhooks/addresses';
import { SecretVault } from '../../src/vault';
import { testService } from '../hooks';
import { createKey, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';

describe('webhook endpoints', () => {
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  before(async () => { owner = await signUp(base()); });

  const create = (body: Record<string, unknown>, token = owner.key) => call(base(), 'POST', '/v1/webhooks', body, { token, idempotencyKey: randomUUID() });
  const request = (method: string, path: string, body?: unknown, token = owner.key) => call(base(), method, path, body, { token, idempotencyKey: randomUUID() });

  it('creates an endpoint whose secret is shown once and kept sealed, then lists, reads, updates and deletes it', async () => {
    const created = await create({ url: 'http://127.0.0.1:9/hooks', events: ['transfer.completed', 'balance.updated'], description: 'ledger sync' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual([created.body.url, created.body.events, created.body.enabled, created.body.description], ['http://127.0.0.1:9/hooks', ['transfer.completed', 'balance.updated'], true, 'ledger sync']);

    const row = await testService().runtime.db('webhook_endpoints').where('id', created.body.id).first();
    assert.doesNotMatch(row.secret_sealed, /whsec_/, 'not in the clear');
    assert.equal(new SecretVault(testService().config.webhookSecretKey, 'webhook-secret-vault').open(row.secret_sealed), created.body.secret);

    const read = await request('GET', `/v1/webhooks/${created.body.id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.secret, undefined, 'the secret is not shown again');
    const listed = await request('GET', '/v1/webhooks');
    assert.deepEqual(listed.body.data.map((e: { id: string }) => e.id), [created.body.id]);

    const updated = await request('PATCH', `/v1/webhooks/${created.body.id}`, { events: [], enabled: false, description: null });
    assert.deepEqual([updated.status, updated.body.events, updated.body.enabled, updated.body.disabled_reason, updated.body.description], [200, [], false, 'disabled by the account', null]);
    const enabled = await request('PATCH', `/v1/webhooks/${created.body.id}`, { enabled: true });
    assert.deepEqual([enabled.body.enabled, enabled.body.disabled_reason], [true, null]);

    const deleted = await request('DELETE', `/v1/webhooks/${created.body.id}`);
    assert.deepEqual([deleted.status, deleted.body], [200, { id: created.body.id, deleted: true }]);
    expectError(await request('GET', `/v1/webhooks/${created.body.id}`), 404, 'resource_not_found');
  });

  it('rotates the secret: a new one shown once, the previous one signing beside it for 24 hours', async () => {
    const created = await create({ url: 'https://example.com/hooks' });
    const rotated = await request('POST', `/v1/webhooks/${created.body.id}/rotate-secret`);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.notEqual(rotated.body.secret, created.body.secret);
    const ends = Date.parse(rotated.body.secret_rotation_ends_at) - Date.now();
    assert.ok(ends > 23.9 * 3600_000 && ends <= 24 * 3600_000, `the overlap ends in ${ends} ms`);
    const row = await testService().runtime.db('webhook_endpoints').where('id', created.body.id).first();
    const vault = new SecretVault(testService().config.webhookSecretKey, 'webhook-secret-vault');
    assert.deepEqual([vault.open(row.secret_sealed), vault.open(row.previous_secret_sealed)], [rotated.body.secret, created.body.secret]);
  });

  it('refuses bad input, naming the field, and stores nothing then', async () => {
    const before = (await request('GET', '/v1/webhooks')).body.data.length;
    expectError(await create({}), 400, 'invalid_request', 'url');
    expectError(await create({ url: 'not a url' }), 400, 'invalid_request', 'url');
    expectError(await create({ url: 'ftp://example.com/x' }), 400, 'invalid_request', 'url');
    expectError(await create({ url: 'https://user:pass@example.com/x' }), 400, 'invalid_request', 'url');
    expectError(await create({ url: 'https://example.com/x', events: ['transfer.exploded'] }), 400, 'invalid_request', 'events[0]');
    expectError(await create({ url: 'https://example.com/x', events: ['balance.updated', 'balance.updated'] }), 400, 'invalid_request', 'events');
    expectError(await request('PATCH', `/v1/webhooks/${randomUUID()}`, {}), 400, 'invalid_request');
    assert.equal((await request('GET', '/v1/webhooks')).body.data.length, before);
  });

  it('lets secret keys, webhooks-scoped restricted keys and sessions manage endpoints; not publishable keys, nor other accounts', async () => {
    const created = await create({ url: 'https://example.com/hooks' });
    const publishable = await createKey(base(), owner.token, 'publishable');
    const reader = await createKey(base(), owner.token, 'restricted', ['webhooks:read']);
    const writer = await createKey(base(), owner.token, 'restricted', ['webhooks:write']);
    expectError(await request('GET', '/v1/webhooks', undefined, publishable.key), 403, 'insufficient_scope');
    expectError(await create({ url: 'https://example.com/x' }, publishable.key), 403, 'publishable_key_write_denied', undefined, 'a publishable key\'s write is refused as such (SPEC.md section 5)');
    assert.equal((await request('GET', `/v1/webhooks/${created.body.id}`, undefined, reader.key)).status, 200);
    expectError(await create({ url: 'https://example.com/x' }, reader.key), 403, 'insufficient_scope');
    assert.equal((await create({ url: 'https://example.com/x' }, writer.key)).status, 201);
    assert.equal((await request('GET', '/v1/webhooks', undefined, owner.token)).status, 200, 'a session');
    const stranger = await signUp(base());
    expectError(await request('GET', `/v1/webhooks/${created.body.id}`, undefined, stranger.key), 403, 'cross_account_access_denied');
    expectError(await request('DELETE', `/v1/webhooks/${created.body.id}`, undefined, stranger.key), 403, 'cross_account_access_denied');
  });

  it('knows which addresses live endpoints may not resolve to', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '::1', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '0.0.0.0']) {
      assert.ok(isPrivateAddress(address), address);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111']) assert.ok(!isPrivateAddress(address), address);
  });
});
