// Revocation and KYB suspension hold in every API process once they answer (issue 36, item 3):
// a request that read a key from Postgres just before the change commits cannot cache it after
// it, and a change whose cache markers Redis cannot take answers 503 with nothing changed, so
// the same request repeated makes it. Two API processes share the stack: the suite's service
// and one whose Postgres and Redis pass through TCP proxies, so its Postgres replies can be
// slowed (its cache fills land late) and its Redis taken away, without touching the servers
// the rest of the suite uses.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { createKey, signUp, uniqueEmail, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { startServiceBehindProxies, type ServiceBehindProxies } from '../support/service';

const RACING_REQUESTS = 50;
/** Of them, to the slow process: its pool's size (src/runtime.ts), so every lookup goes out at once. */
const SLOW_PROCESS_REQUESTS = 20;
/** How late the slow process's Postgres replies arrive while a change races its requests. */
const SLOW_REPLY_MS = 1_500;
/** Long enough for the slow process to send its key lookups to Postgres before the change. */
const LOOKUPS_SENT_MS = 300;
/** How long every request after the change must see it, late fills included. */
const WATCH_MS = 4_000;

describe('revocation and suspension hold in every API process', function () {
  this.timeout(120_000);
  let slow: ServiceBehindProxies;
  const fast = () => testService().baseUrl;
  const processes = () => [fast(), slow.service.baseUrl];
  const masterKey = () => testService().runtime.config.masterKey;

  before(async () => {
    slow = await startServiceBehindProxies({ ROLES: 'api', LOG_LEVEL: 'error' });
  });
  after(() => slow?.stop());

  /**
   * Sends RACING_REQUESTS requests with the key to the two processes, while the slow process's
   * Postgres replies are late; makes the change while they run, once the slow process's lookups
   * are out (they read Postgres before the change commits, their cache fills come after it
   * answers); returns the change's answer once every racing request has answered.
   */
  async function race(key: string, path: string, change: () => Promise<JsonResponse>): Promise<JsonResponse> {
    // Connections opened now, so the racing lookups need no (slowed) handshake before they are sent.
    await Promise.all(Array.from({ length: SLOW_PROCESS_REQUESTS }, () => slow.service.runtime.db.raw('SELECT pg_sleep(0.05)')));
    slow.postgres.replyDelayMs = SLOW_REPLY_MS;
    try {
      // The slow process's first: were the fast one's fills there already, its lookups would find
      // them in the cache and never ask Postgres.
      const racing = Array.from({ length: SLOW_PROCESS_REQUESTS }, () => call(slow.service.baseUrl, 'GET', path, undefined, { token: key }));
      await new Promise((resolve) => setTimeout(resolve, LOOKUPS_SENT_MS));
      racing.push(...Array.from({ length: RACING_REQUESTS - SLOW_PROCESS_REQUESTS }, () => call(fast(), 'GET', path, undefined, { token: key })));
      const answer = await change();
      slow.postgres.replyDelayMs = 0;
      for (const response of await Promise.all(racing)) assert.ok([200, 401].includes(response.status), `a racing request answered ${response.status}`);
      return answer;
    } finally {
      slow.postgres.replyDelayMs = 0;
    }
  }

  /** For WATCH_MS, every request with the key, to either process, gets what `expect` checks. */
  async function watch(expect: (response: JsonResponse, what: string) => void, request: (baseUrl: string) => Promise<JsonResponse>): Promise<void> {
    const until = Date.now() + WATCH_MS;
    for (let round = 0; Date.now() < until; round++) {
      const answers = await Promise.all(processes().map((baseUrl) => request(baseUrl)));
      answers.forEach((response, i) => expect(response, `round ${round}, ${i === 0 ? 'first' : 'second'} process`));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const revoke = (owner: SignedUp, keyId: string, baseUrl: string, idempotencyKey = randomUUID()) =>
    call(baseUrl, 'DELETE', `/v1/api-keys/${keyId}`, undefined, { token: owner.token, idempotencyKey });
  const suspend = (owner: SignedUp, baseUrl: string, idempotencyKey = randomUUID()) =>
    call(baseUrl, 'PATCH', `/v1/sandbox/accounts/${owner.account.id}`, { kyb_status: 'suspended' }, { token: masterKey(), idempotencyKey });
  const transfer = (baseUrl: string, key: string) =>
    call(baseUrl, 'POST', '/v1/transfers', { recipient_email: uniqueEmail('recipient'), amount: '1.00', currency: 'USD', note: 'after the change' }, { token: key, idempotencyKey: randomUUID() });
  const listedKey = async (owner: SignedUp, keyId: string) =>
    (await call(fast(), 'GET', '/v1/api-keys', undefined, { token: owner.token })).body.data.find((k: { id: string }) => k.id === keyId);

  it('refuses a revoked key in both processes once DELETE answers, even after fills that were in flight', async () => {
    const owner = await signUp(fast());
    const key = await createKey(fast(), owner.token, 'secret');

    const revoked = await race(key.key, '/v1/customers', () => revoke(owner, key.id, fast()));
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));

    await watch((response, what) => expectError(response, 401, 'invalid_api_key', undefined, what), (baseUrl) => call(baseUrl, 'GET', '/v1/customers', undefined, { token: key.key }));
    for (const baseUrl of processes()) expectError(await transfer(baseUrl, key.key), 401, 'invalid_api_key', undefined, 'a transfer with the revoked key');
    assert.equal((await call(slow.service.baseUrl, 'GET', '/v1/customers', undefined, { token: owner.key })).status, 200, 'the other key still works');
  });

  it('applies a suspension to every key of the account in both processes once it answers', async () => {
    const owner = await signUp(fast());
    const key = await createKey(fast(), owner.token, 'secret');

    const suspended = await race(key.key, '/v1/accounts/me', () => suspend(owner, fast()));
    assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
    assert.equal(suspended.body.kyb_status, 'suspended');

    await watch((response, what) => {
      assert.equal(response.status, 200, what);
      assert.equal(response.body.kyb_status, 'suspended', `${what}: GET /v1/accounts/me still shows the old status`);
    }, (baseUrl) => call(baseUrl, 'GET', '/v1/accounts/me', undefined, { token: key.key }));
    for (const baseUrl of processes()) {
      for (const token of [key.key, owner.key]) expectError(await transfer(baseUrl, token), 403, 'account_not_active', undefined, 'a transfer after the suspension');
    }
  });

  it('answers 503 to a revocation while Redis is away, changes nothing, and revokes when repeated', async () => {
    const owner = await signUp(fast());
    const key = await createKey(fast(), owner.token, 'secret');
    // Cached in Redis: the entry a revocation must not leave usable.
    for (const baseUrl of processes()) assert.equal((await call(baseUrl, 'GET', '/v1/customers', undefined, { token: key.key })).status, 200);

    await slow.redis.cut();
    const idempotencyKey = randomUUID();
    const refused = await revoke(owner, key.id, slow.service.baseUrl, idempotencyKey);
    expectError(refused, 503, 'service_unavailable', 'redis', 'DELETE /v1/api-keys/{id} without Redis');
    assert.equal(refused.headers.get('retry-after'), '2');
    assert.equal((await listedKey(owner, key.id)).revoked_at, null, 'a refused revocation revoked nothing');
    for (const baseUrl of processes()) assert.equal((await call(baseUrl, 'GET', '/v1/customers', undefined, { token: key.key })).status, 200, 'nor stopped the key');

    await slow.redis.restore();
    const repeated = await eventually(async () => {
      const response = await revoke(owner, key.id, slow.service.baseUrl, idempotencyKey);
      return response.status === 503 ? undefined : response;
    }, 20_000, 'the revocation goes through once Redis is back');
    assert.equal(repeated.status, 200, JSON.stringify(repeated.body));
    assert.ok((await listedKey(owner, key.id)).revoked_at);
    await watch((response, what) => expectError(response, 401, 'invalid_api_key', undefined, what), (baseUrl) => call(baseUrl, 'GET', '/v1/customers', undefined, { token: key.key }));
  });

  it('answers 503 to a suspension while Redis is away, changes nothing, and suspends when repeated', async () => {
    const owner = await signUp(fast());
    for (const baseUrl of processes()) assert.equal((await call(baseUrl, 'GET', '/v1/accounts/me', undefined, { token: owner.key })).body.kyb_status, 'active');

    await slow.redis.cut();
    const idempotencyKey = randomUUID();
    const refused = await suspend(owner, slow.service.baseUrl, idempotencyKey);
    expectError(refused, 503, 'service_unavailable', 'redis', 'PATCH /v1/sandbox/accounts/{id} without Redis');
    assert.equal(refused.headers.get('retry-after'), '2');
    const account = await call(fast(), 'GET', `/v1/accounts/me?account_id=${owner.account.id}`, undefined, { token: masterKey() });
    assert.equal(account.body.kyb_status, 'active', 'a refused suspension changed nothing');

    await slow.redis.restore();
    const repeated = await eventually(async () => {
      const response = await suspend(owner, slow.service.baseUrl, idempotencyKey);
      return response.status === 503 ? undefined : response;
    }, 20_000, 'the suspension goes through once Redis is back');
    assert.equal(repeated.status, 200, JSON.stringify(repeated.body));
    await watch((response, what) => assert.equal(response.body.kyb_status, 'suspended', what), (baseUrl) => call(baseUrl, 'GET', '/v1/accounts/me', undefined, { token: owner.key }));
  });
});
