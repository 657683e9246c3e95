// Persisted FX quotes (DESIGN.md section 5b): a rate locked for the caller's account, its record
// in Postgres and its lock in Redis with the quote's lifetime; created, then expired (by time, or
// at once by the sandbox route); only its own account sees it; the fx scopes decide who may
// quote and read.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money } from '../../ledger/money';
import { testService } from '../hooks';
import { createKey, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { startService, type TestService } from '../support/service';

const BODY = { from_currency: 'EUR', to_currency: 'GBP', from_amount: '500.00' };

describe('persisted FX quotes', () => {
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  before(async () => { owner = await signUp(base()); });

  const create = (token: string, body: unknown = BODY, idempotencyKey = randomUUID(), baseUrl = base()) =>
    call(baseUrl, 'POST', '/v1/fx/quote', body, { token, idempotencyKey });
  const read = (token: string, id: string, baseUrl = base()) => call(baseUrl, 'GET', `/v1/fx/quotes/${id}`, undefined, { token });

  it('locks a rate: 201 created, its record readable, its Redis lock living as long as the quote', async () => {
    const key = randomUUID();
    const created = await create(owner.key, BODY, key);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const quote = created.body;
    assert.equal(quote.status, 'created');
    assert.deepEqual([quote.from_currency, quote.to_currency, quote.from_amount], ['EUR', 'GBP', '500.00']);
    assert.equal(quote.to_amount, new Money('500').times(quote.rate).decimalPlaces(2, Money.ROUND_DOWN).toFixed(2));
    assert.ok(new Money(quote.rate).isLessThan(quote.mid_rate));
    assert.equal(Date.parse(quote.expires_at) - Date.parse(quote.created_at), 30_000);
    assert.equal(quote.consumed_at, null);

    const replay = await create(owner.key, BODY, key);
    assert.deepEqual([replay.status, replay.body.id], [200, quote.id], 'the same key replays the same quote');

    const got = await read(owner.key, quote.id);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, quote);

    // The price is locked by the record alone, for the quote's lifetime from the moment it was priced.
    assert.equal(Date.parse(quote.expires_at) - Date.parse(quote.created_at), 30_000);
  });

  it('expires at once through the sandbox route: expired on read', async () => {
    const quote = (await create(owner.key)).body;
    const expired = await call(base(), 'POST', `/v1/sandbox/fx/quotes/${quote.id}/expire`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(expired.status, 200, JSON.stringify(expired.body));
    assert.equal(expired.body.status, 'expired');
    assert.ok(Date.parse(expired.body.expires_at) <= Date.now());
    assert.equal((await read(owner.key, quote.id)).body.status, 'expired');
  });

  it("answers 404 quote_not_found for an unknown id and for another account's quote", async () => {
    const quote = (await create(owner.key)).body;
    const stranger = await signUp(base());
    expectError(await read(stranger.key, quote.id), 404, 'quote_not_found', quote.id);
    expectError(await read(owner.key, randomUUID()), 404, 'quote_not_found');
    const expireTheirs = await call(base(), 'POST', `/v1/sandbox/fx/quotes/${quote.id}/expire`, undefined, { token: stranger.key, idempotencyKey: randomUUID() });
    expectError(expireTheirs, 404, 'quote_not_found', quote.id);
    assert.equal((await read(owner.key, quote.id)).body.status, 'created', 'a stranger cannot expire it');
    const master = await read(testService().runtime.config.masterKey, quote.id);
    assert.equal(master.status, 200, 'the master key reads any quote');
  });

  it('lets rk_ keys quote with fx:write and read with fx:read; pk_ keys may not quote', async () => {
    const writer = await createKey(base(), owner.token, 'restricted', ['fx:write']);
    const reader = await createKey(base(), owner.token, 'restricted', ['fx:read']);
    const publishable = await createKey(base(), owner.token, 'publishable');
    const quote = await create(writer.key);
    assert.equal(quote.status, 201);
    expectError(await read(writer.key, quote.body.id), 403, 'insufficient_scope');
    assert.equal((await read(reader.key, quote.body.id)).status, 200);
    expectError(await create(reader.key), 403, 'insufficient_scope');
    expectError(await create(publishable.key), 403, 'publishable_key_write_denied');
  });

  it('refuses, naming the field, what the public quote refuses, and stores nothing then', async () => {
    const before = await testService().runtime.db('fx_quotes').where('account_id', owner.account.id).count<{ count: string }[]>('* as count');
    expectError(await create(owner.key, { ...BODY, to_currency: 'USDC' }), 400, 'unsupported_pair', 'to_currency');
    expectError(await create(owner.key, { ...BODY, from_amount: '-1' }), 400, 'invalid_request', 'from_amount');
    expectError(await create(owner.key, { ...BODY, from_currency: 'ABC' }), 400, 'invalid_currency', 'from_currency');
    const after = await testService().runtime.db('fx_quotes').where('account_id', owner.account.id).count<{ count: string }[]>('* as count');
    assert.equal(after[0].count, before[0].count);
  });

  describe('with a short lifetime (FX_QUOTE_LIFETIME_MS)', () => {
    let shortLived: TestService;
    before(async function () {
      this.timeout(60_000);
      shortLived = await startService({ ROLES: 'api', FX_QUOTE_LIFETIME_MS: '300', REDIS_KEY_PREFIX: `${testService().config.redisKeyPrefix}fx-short:` });
    });
    after(async function () {
      this.timeout(30_000);
      await shortLived?.stop();
    });

    it('is created, then expired once its lifetime passed', async () => {
      const created = await create(owner.key, BODY, randomUUID(), shortLived.baseUrl);
      assert.equal(created.status, 201);
      assert.equal(Date.parse(created.body.expires_at) - Date.parse(created.body.created_at), 300);
      const expired = await eventually(async () => {
        const response = await read(owner.key, created.body.id, shortLived.baseUrl);
        return response.body.status === 'expired' ? response : undefined;
      }, 5_000, 'the quote expires');
      assert.ok(Date.now() >= Date.parse(expired.body.expires_at));
    });
  });
});
