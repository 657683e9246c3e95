// A creation whose request died after its row committed and before its answer was recorded
// (src/idempotency/guard.ts): the key's record is left in progress, its lease lapses, and the
// client's retry under the key takes the execution over. It must answer what the first made, and
// make nothing more: simulation seed 17 found a balance with one alert more than its client made,
// a 503 under Postgres's kill followed by a retry that made a second. Each case makes the state
// such a death leaves (the record in progress and lapsed, Redis without the key's answer) after a
// first request, then repeats the request under the key.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { signUp, uniqueEmail, type SignedUp } from '../support/accounts';
import { call } from '../support/http';
import { browse, consent } from '../support/partner-links';

interface Creation {
  what: string;
  path: (owner: SignedUp) => Promise<string> | string;
  body: (owner: SignedUp) => Record<string, unknown>;
  token?: (owner: SignedUp) => string;
  /** The account's resources of this kind, by id, as the service reads them. */
  ids: (owner: SignedUp) => Promise<string[]>;
  idOf?: (body: any) => string;
}

const base = () => testService().baseUrl;
const rows = (table: string, where: Record<string, unknown>) => async () => (await testService().runtime.db(table).where(where).select('id')).map((r: { id: string }) => r.id);

const CREATIONS: Creation[] = [
  {
    what: 'a balance alert', path: () => '/v1/balance-alerts', body: () => ({ currency: 'EUR', below: '10.00' }),
    ids: (o) => rows('balance_alerts', { account_id: o.account.id })(),
  },
  { what: 'a wallet', path: () => '/v1/wallets', body: () => ({ name: 'Savings' }), ids: (o) => rows('wallets', { account_id: o.account.id })() },
  { what: 'a contact', path: () => '/v1/contacts', body: () => ({ name: 'Ada', email: uniqueEmail('contact') }), ids: (o) => rows('contacts', { account_id: o.account.id })() },
  {
    what: 'an FX quote', path: () => '/v1/fx/quote', body: () => ({ from_currency: 'EUR', to_currency: 'GBP', from_amount: '10.00' }),
    ids: (o) => rows('fx_quotes', { account_id: o.account.id })(),
  },
  {
    what: 'a webhook endpoint', path: () => '/v1/webhooks', body: () => ({ url: 'http://127.0.0.1:9/hooks' }),
    ids: (o) => rows('webhook_endpoints', { account_id: o.account.id })(),
  },
  {
    what: 'an API key', path: () => '/v1/api-keys', body: () => ({ type: 'secret', name: 'deploys' }), token: (o) => o.token,
    // The sign-up's own key aside.
    ids: async (o) => (await rows('api_keys', { account_id: o.account.id })()).filter((id) => id !== o.keyId),
  },
  {
    what: 'a partner link',
    path: async (o) => {
      const customer = await call(base(), 'POST', '/v1/customers', { email: uniqueEmail('customer'), business_name: 'Linked Ltd', country_code: 'GB' }, { token: o.key, idempotencyKey: randomUUID() });
      assert.equal(customer.status, 201, JSON.stringify(customer.body));
      return `/v1/customers/${customer.body.id}/partner-links`;
    },
    body: () => ({ partner: 'openbank' }),
    ids: (o) => rows('partner_links', { account_id: o.account.id })(),
  },
];

/** What a request that died after its effect committed leaves: its record in progress with a lapsed lease, and no answer in Redis. */
async function dieBeforeTheAnswer(owner: SignedUp, idempotencyKey: string): Promise<void> {
  const { runtime } = testService();
  const updated = await runtime.db('idempotency_records').where({ scope: owner.account.id, idempotency_key: idempotencyKey })
    .update({ state: 'in_progress', response_status: null, response_body: null, locked_until: runtime.db.raw("now() - interval '1 second'") });
  assert.equal(updated, 1, 'the first request kept its record');
  assert.equal(await runtime.redis.del(`idem:${owner.account.id}:${idempotencyKey}`), 1, 'the first request kept its answer in Redis');
}

describe('creations whose request died before its answer was recorded', () => {
  for (const creation of CREATIONS) {
    it(`answer ${creation.what} once to the retry under the key, and make no second`, async () => {
      const owner = await signUp(base());
      const path = await creation.path(owner);
      const body = creation.body(owner);
      const idempotencyKey = randomUUID();
      const token = creation.token?.(owner) ?? owner.key;
      const first = await call(base(), 'POST', path, body, { token, idempotencyKey });
      assert.equal(first.status, 201, JSON.stringify(first.body));
      await dieBeforeTheAnswer(owner, idempotencyKey);

      const retry = await call(base(), 'POST', path, body, { token, idempotencyKey });
      assert.equal(retry.status, 200, `a replay of what the first made: ${JSON.stringify(retry.body)}`);
      assert.equal(retry.headers.get('idempotent-replayed'), 'true');
      assert.equal(retry.body.id, first.body.id, 'the resource the first request made');
      assert.deepEqual(await creation.ids(owner), [first.body.id], 'one made, however often the key ran');
      // A later repeat reads the recorded answer.
      const again = await call(base(), 'POST', path, body, { token, idempotencyKey });
      assert.deepEqual([again.status, again.body.id], [200, first.body.id]);
    });
  }

  it('gives the retry of a webhook endpoint the secret it was made with; of an API key a new secret, the one made first being known to no one', async () => {
    const owner = await signUp(base());
    const webhookKey = randomUUID();
    const endpoint = await call(base(), 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hooks' }, { token: owner.key, idempotencyKey: webhookKey });
    await dieBeforeTheAnswer(owner, webhookKey);
    const endpointRetry = await call(base(), 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hooks' }, { token: owner.key, idempotencyKey: webhookKey });
    assert.equal(endpointRetry.body.secret, endpoint.body.secret, 'the endpoint\'s one secret');

    const apiKey = randomUUID();
    const made = await call(base(), 'POST', '/v1/api-keys', { type: 'secret' }, { token: owner.token, idempotencyKey: apiKey });
    await dieBeforeTheAnswer(owner, apiKey);
    const retried = await call(base(), 'POST', '/v1/api-keys', { type: 'secret' }, { token: owner.token, idempotencyKey: apiKey });
    assert.equal(retried.body.id, made.body.id);
    assert.notEqual(retried.body.key, made.body.key);
    assert.equal((await call(base(), 'GET', '/v1/wallets', undefined, { token: retried.body.key })).status, 200, 'the key answered works');
    assert.equal((await call(base(), 'GET', '/v1/wallets', undefined, { token: made.body.key })).status, 401, 'the secret no one was shown does not');
  });

  it('sends one test event to a webhook endpoint, however often the key ran', async () => {
    const owner = await signUp(base());
    const endpoint = await call(base(), 'POST', '/v1/webhooks', { url: 'http://127.0.0.1:9/hooks' }, { token: owner.key, idempotencyKey: randomUUID() });
    const path = `/v1/webhooks/${endpoint.body.id}/test`;
    const idempotencyKey = randomUUID();
    const first = await call(base(), 'POST', path, undefined, { token: owner.key, idempotencyKey });
    assert.equal(first.status, 202, JSON.stringify(first.body));
    await dieBeforeTheAnswer(owner, idempotencyKey);
    const retry = await call(base(), 'POST', path, undefined, { token: owner.key, idempotencyKey });
    assert.deepEqual([retry.status, retry.headers.get('idempotent-replayed'), retry.body.id], [202, 'true', first.body.id]);
    const tests = await testService().runtime.db('webhook_deliveries').where({ endpoint_id: endpoint.body.id, event_type: 'webhook.test' }).select('id');
    assert.deepEqual(tests.map((t: { id: string }) => t.id), [first.body.id], 'one test delivery');
  });

  it('gives the retry of a partner link a consent page that works', async () => {
    const owner = await signUp(base());
    const customer = await call(base(), 'POST', '/v1/customers', { email: uniqueEmail('customer'), business_name: 'Linked Ltd', country_code: 'GB' }, { token: owner.key, idempotencyKey: randomUUID() });
    const path = `/v1/customers/${customer.body.id}/partner-links`;
    const idempotencyKey = randomUUID();
    await call(base(), 'POST', path, { partner: 'openbank' }, { token: owner.key, idempotencyKey });
    await dieBeforeTheAnswer(owner, idempotencyKey);
    const retry = await call(base(), 'POST', path, { partner: 'openbank' }, { token: owner.key, idempotencyKey });
    const landed = await browse(await consent(retry.body.authorize_url, 'approve'));
    assert.equal(landed.status, 200, landed.html);
    const links = await call(base(), 'GET', path, undefined, { token: owner.key });
    assert.deepEqual(links.body.data.map((l: { id: string; status: string }) => [l.id, l.status]), [[retry.body.id, 'active']]);
  });
});
