// The webhook dispatcher's endpoints in memory (src/webhooks/endpoint-cache.ts): an account read
// without endpoints is not asked again, yet an endpoint registered, disabled or deleted after that
// read is seen as soon as Postgres announces it; with the announcements lost (the listening
// connection ended), every look-up reads Postgres until it listens again.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EndpointCache } from '../../src/webhooks/endpoint-cache';
import { WebhookEndpoints } from '../../src/webhooks/endpoints';
import { SecretVault } from '../../src/vault';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { eventually } from '../support/http';

/** An endpoint change reaches the listener within this long on a quiet machine; the wait allows far more. */
const HEARD_WITHIN_MS = 5_000;

describe('webhook endpoints held in memory', () => {
  let cache: EndpointCache;
  let endpoints: WebhookEndpoints;

  beforeEach(async () => {
    const { runtime } = testService();
    cache = new EndpointCache(runtime.db, runtime.config.databaseUrl);
    await cache.start();
    endpoints = new WebhookEndpoints(runtime.db, new SecretVault(runtime.config.webhookSecretKey, 'webhook-secret-vault'));
  });
  afterEach(() => cache.stop());

  it('sees an endpoint registered, disabled and deleted after the account was read without one', async () => {
    assert.ok(cache.listening);
    const { account } = await signUp(testService().baseUrl);
    assert.deepEqual(await cache.endpointsOf([account.id]), [], 'none yet, and now held as none');
    const { endpoint } = await endpoints.create(randomUUID(), account.id, { url: 'http://127.0.0.1:9/hooks', events: [], description: null });
    const seen = await eventually(async () => (await cache.endpointsOf([account.id])).find((e) => e.id === endpoint.id), HEARD_WITHIN_MS, 'the new endpoint');
    assert.equal(seen.enabled, true);
    await endpoints.update(endpoint.id, { enabled: false });
    await eventually(async () => ((await cache.endpointsOf([account.id]))[0]?.enabled === false ? true : undefined), HEARD_WITHIN_MS, 'the endpoint disabled');
    await endpoints.delete(endpoint.id);
    await eventually(async () => ((await cache.endpointsOf([account.id])).length === 0 ? true : undefined), HEARD_WITHIN_MS, 'the endpoint deleted');
  });

  it('reads Postgres on every look-up while it does not hear the changes, and listens again', async () => {
    const { account } = await signUp(testService().baseUrl);
    assert.deepEqual(await cache.endpointsOf([account.id]), []);
    const { db } = testService().runtime;
    // The listening connection ended from the server's side: its announcements would be lost.
    await db.raw(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN webhook_endpoint_changes' AND datname = current_database()`);
    await eventually(async () => (cache.listening ? undefined : true), HEARD_WITHIN_MS, 'the cache to notice it does not listen');
    // Written straight into the table, as another process would; no announcement reaches this cache.
    const { endpoint } = await endpoints.create(randomUUID(), account.id, { url: 'http://127.0.0.1:9/hooks', events: [], description: null });
    assert.deepEqual((await cache.endpointsOf([account.id])).map((e) => e.id), [endpoint.id], 'read from Postgres at once');
    await eventually(async () => (cache.listening ? true : undefined), 10_000, 'the cache to listen again');
    await endpoints.delete(endpoint.id);
    await eventually(async () => ((await cache.endpointsOf([account.id])).length === 0 ? true : undefined), HEARD_WITHIN_MS, 'the deletion heard');
  });
});
