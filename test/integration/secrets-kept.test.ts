// A secret is shown once and kept nowhere in clear (src/redaction.ts): the full key of
// POST /v1/api-keys, the signing secret of POST /v1/webhooks and of rotate-secret, and the OAuth
// state of a partner link's authorize_url. A replay of the same Idempotency-Key answers the same
// object with the secret redacted and the header Secret-Redacted: true (a partner link's consent
// page is given again while the link waits for consent); the Postgres record, the
// Redis copy and the request logs hold no secret; the migration redacts answers kept before.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { up as redactStoredAnswers } from '../../migrations/20261129110000_redact_stored_answers';
import { testService } from '../hooks';
import { createCustomer, createKey, signUp, type SignedUp } from '../support/accounts';
import { call, type JsonResponse } from '../support/http';
import { consent } from '../support/partner-links';
import { loggedRequest } from '../support/request-logs';

const REDACTED = '[redacted]';

describe('secrets shown once, kept nowhere in clear', () => {
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  before(async () => {
    owner = await signUp(base());
  });

  /** What Postgres and Redis keep of the key's answer, as text. */
  async function kept(idempotencyKey: string): Promise<{ postgres: string; redis: string }> {
    const { db, redis } = testService().runtime;
    const row = await db('idempotency_records').where({ scope: owner.account.id, idempotency_key: idempotencyKey }).first('response_body', 'state');
    assert.equal(row?.state, 'completed', 'the record is kept');
    const cached = await redis.get(`idem:${owner.account.id}:${idempotencyKey}`);
    assert.ok(cached, 'the answer is in Redis');
    return { postgres: JSON.stringify(row.response_body), redis: cached };
  }

  /** The same request again, and then again once Redis forgot it (the answer read from Postgres). */
  async function replays(send: () => Promise<JsonResponse>, idempotencyKey: string): Promise<JsonResponse[]> {
    const fromRedis = await send();
    await testService().runtime.redis.del(`idem:${owner.account.id}:${idempotencyKey}`);
    const fromPostgres = await send();
    return [fromRedis, fromPostgres];
  }

  function assertRedactedReplay(replay: JsonResponse, first: JsonResponse, field: string, redactedValue: string): void {
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.headers.get('secret-redacted'), 'true', 'the replay says its secret is redacted');
    assert.equal(replay.body[field], redactedValue);
    assert.deepEqual({ ...replay.body, [field]: null }, { ...first.body, [field]: null }, 'the same object otherwise');
  }

  /** A new customer's partner link made under a new Idempotency-Key, and how to send that request again. */
  async function newPartnerLink(): Promise<{ idempotencyKey: string; send: () => Promise<JsonResponse>; first: JsonResponse }> {
    const customer = await createCustomer(base(), owner.key);
    const idempotencyKey = randomUUID();
    const send = () => call(base(), 'POST', `/v1/customers/${customer.body.id}/partner-links`, { partner: 'fiat' }, { token: owner.key, idempotencyKey });
    const first = await send();
    assert.equal(first.status, 201, JSON.stringify(first.body));
    return { idempotencyKey, send, first };
  }

  async function assertLogsHoldNo(secret: string, ...requestIds: string[]): Promise<void> {
    for (const id of requestIds) {
      const logged = await loggedRequest(id);
      assert.ok(!JSON.stringify(logged).includes(secret), `the log of ${id} holds no secret: ${JSON.stringify(logged)}`);
    }
  }

  /**
   * Sends once, then replays: the first answer (`status`) shows `field` matching `shown`; Postgres,
   * Redis, both replays and the log of every request hold it redacted.
   */
  async function expectShownOnce(send: () => Promise<JsonResponse>, idempotencyKey: string, status: number, field: string, shown: RegExp): Promise<{ first: JsonResponse; stored: { postgres: string; redis: string } }> {
    const first = await send();
    assert.equal(first.status, status, JSON.stringify(first.body));
    const secret: string = first.body[field];
    assert.match(secret, shown);
    const stored = await kept(idempotencyKey);
    for (const text of [stored.postgres, stored.redis]) assert.ok(!text.includes(secret), text);
    const answers = await replays(send, idempotencyKey);
    for (const replay of answers) assertRedactedReplay(replay, first, field, REDACTED);
    await assertLogsHoldNo(secret, ...[first, ...answers].map((answer) => answer.headers.get('request-id')!));
    return { first, stored };
  }

  it('POST /v1/api-keys: the key once; a replay, Postgres, Redis and the logs hold it redacted', async () => {
    const idempotencyKey = randomUUID();
    const send = () => call(base(), 'POST', '/v1/api-keys', { type: 'secret', name: 'shown once' }, { token: owner.token, idempotencyKey });
    const { first, stored } = await expectShownOnce(send, idempotencyKey, 201, 'key', /^sk_sandbox_/);
    assert.equal(first.headers.get('secret-redacted'), null, 'the first answer has its secret');
    for (const text of [stored.postgres, stored.redis]) assert.ok(text.includes(REDACTED), text);
  });

  it('POST /v1/webhooks and rotate-secret: a restricted key with webhooks:write cannot get the whsec_ back', async () => {
    const writer = await createKey(base(), owner.token, 'restricted', ['webhooks:write']);
    const idempotencyKey = randomUUID();
    const body = { url: 'https://example.com/hooks', description: 'shown once' };
    const send = () => call(base(), 'POST', '/v1/webhooks', body, { token: writer.key, idempotencyKey });
    const { first } = await expectShownOnce(send, idempotencyKey, 201, 'secret', /^whsec_/);

    const rotationKey = randomUUID();
    const rotate = () => call(base(), 'POST', `/v1/webhooks/${first.body.id}/rotate-secret`, {}, { token: writer.key, idempotencyKey: rotationKey });
    await expectShownOnce(rotate, rotationKey, 200, 'secret', /^whsec_/);
  });

  it('a partner link: Postgres, Redis and the logs (the callback\'s too) hold its OAuth state redacted; a replay gives the consent page while the link waits for consent, redacted after', async () => {
    const { idempotencyKey, send, first } = await newPartnerLink();
    const url = new URL(first.body.authorize_url);
    const state = url.searchParams.get('state')!;
    assert.ok(state.length >= 40, 'a live state');
    const stored = await kept(idempotencyKey);
    for (const text of [stored.postgres, stored.redis]) assert.ok(!text.includes(state), text);
    // A client whose first answer was lost retries under its key (simulation seed 18): while the
    // link waits for consent, the replay (from Redis, then from Postgres) is the consent page the first answered.
    const waiting = await replays(send, idempotencyKey);
    for (const replay of waiting) {
      assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed'), replay.headers.get('secret-redacted')], [200, 'true', null]);
      assert.deepEqual(replay.body, first.body, 'the same link and consent page');
    }
    await assertLogsHoldNo(state, first.headers.get('request-id')!, ...waiting.map((a) => a.headers.get('request-id')!));

    // The partner's redirect carries the state and a code in its query: its log keeps neither.
    const callback = await consent(waiting[1].body.authorize_url, 'approve');
    const code = new URL(callback).searchParams.get('code')!;
    const landed = await fetch(callback, { redirect: 'manual' });
    assert.equal(landed.status, 200, await landed.text());
    const logged = await loggedRequest(landed.headers.get('request-id')!);
    assert.ok(!logged.query.includes(state) && !logged.query.includes(code), logged.query);
    assert.match(logged.query, /state=%5Bredacted%5D/);

    // Linked, the state is spent and forgotten: a replay answers it redacted, and says so.
    const after = await replays(send, idempotencyKey);
    url.searchParams.set('state', REDACTED);
    for (const replay of after) {
      assertRedactedReplay(replay, first, 'authorize_url', replay.body.authorize_url);
      const replayed = new URL(replay.body.authorize_url);
      assert.equal(replayed.searchParams.get('state'), REDACTED);
      assert.deepEqual([...replayed.searchParams.keys()].sort(), [...url.searchParams.keys()].sort(), 'the same URL, its state redacted');
    }
    const row = await testService().runtime.db('partner_links').where('id', first.body.id).first();
    assert.deepEqual([row.status, row.state_hash, row.state_sealed], ['active', null, null]);
  });

  it("a pending partner link whose consent request expired: its replay is redacted, and says so", async () => {
    const { idempotencyKey, send, first } = await newPartnerLink();
    await testService().runtime.db('partner_links').where('id', first.body.id).update({ state_expires_at: new Date(Date.now() - 1_000) });
    for (const replay of await replays(send, idempotencyKey)) {
      assertRedactedReplay(replay, first, 'authorize_url', replay.body.authorize_url);
      assert.equal(new URL(replay.body.authorize_url).searchParams.get('state'), REDACTED);
    }
  });

  it('the document declares the Secret-Redacted header on the routes that make a secret', async () => {
    const document = (await call(base(), 'GET', '/v1/openapi.json')).body;
    const operations: Array<[string, string, string]> = [
      ['/v1/api-keys', 'post', '200'], ['/v1/webhooks', 'post', '200'], ['/v1/webhooks/{id}/rotate-secret', 'post', '200'],
      ['/v1/customers/{id}/partner-links', 'post', '200'],
    ];
    for (const [path, method, status] of operations) {
      const header = document.paths[path][method].responses[status]?.headers?.['Secret-Redacted'];
      assert.ok(header?.description, `${method} ${path} ${status} declares Secret-Redacted`);
    }
  });

  it('the migration redacts answers kept in clear before', async () => {
    const { db } = testService().runtime;
    const scope = randomUUID();
    const clear = {
      key: { id: randomUUID(), key: 'sk_sandbox_0123456789abcdefghij', key_hint: 'sk_sandbox_...ghij' },
      secret: { id: randomUUID(), url: 'https://example.com/x', secret: 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0' },
      url: { id: randomUUID(), authorize_url: 'http://127.0.0.1:1/fiat/oauth/authorize?client_id=c&state=live-state-value&response_type=code' },
      plain: { id: randomUUID(), key: 'a message key', amount: '1.00' },
    };
    await db('idempotency_records').insert(Object.entries(clear).map(([name, body]) => ({
      scope, idempotency_key: name, fingerprint: 'f', state: 'completed', response_status: 201, response_body: JSON.stringify(body),
      expires_at: new Date(Date.now() + 60_000),
    })));
    await redactStoredAnswers(db);
    const rows: Array<{ idempotency_key: string; response_body: any }> = await db('idempotency_records').where({ scope }).select('idempotency_key', 'response_body');
    const byName = Object.fromEntries(rows.map((row) => [row.idempotency_key, row.response_body]));
    assert.deepEqual(byName.key, { ...clear.key, key: REDACTED });
    assert.deepEqual(byName.secret, { ...clear.secret, secret: REDACTED });
    assert.deepEqual(byName.url, { ...clear.url, authorize_url: 'http://127.0.0.1:1/fiat/oauth/authorize?client_id=c&state=%5Bredacted%5D&response_type=code' });
    assert.deepEqual(byName.plain, clear.plain, 'an answer without a secret as it was');
  });
});
