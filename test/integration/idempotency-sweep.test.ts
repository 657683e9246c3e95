// Expired idempotency records of the routes whose record the API keeps are removed on a schedule,
// in bounded batches (src/idempotency/sweep.ts); unexpired records stay, and so do the
// ledger's processed commands, the records of money-moving keys, which are kept for good.
import Redis from 'ioredis';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { idempotentCommandId } from '../../src/idempotency/derived-ids';
import { sweepExpiredIdempotencyRecords } from '../../src/idempotency/sweep';
import { db, testService } from '../hooks';
import { signUp, uniqueEmail, type SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { fund } from '../support/money';
import { startService, type TestService } from '../support/service';

describe('sweeping expired idempotency records', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;

  async function contactUnder(owner: SignedUp, key: string, name = 'Swept'): Promise<string> {
    const created = await call(base(), 'POST', '/v1/contacts', { name, email: uniqueEmail('contact') }, { token: owner.key, idempotencyKey: key });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body.id;
  }

  /** The records' 24 hours have passed: in Postgres, and for the key's entry in Redis, which lives as long. */
  async function expire(owner: SignedUp, keys: string[]): Promise<void> {
    await db()('idempotency_records').where('scope', owner.account.id).whereIn('idempotency_key', keys)
      .update({ expires_at: db().raw("now() - interval '1 minute'") });
    const { config } = testService();
    const raw = new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await raw.connect();
    try {
      for (const key of keys) await raw.del(`${config.redisKeyPrefix}idem:${owner.account.id}:${key}`);
    } finally {
      raw.disconnect();
    }
  }

  const recordKeys = async (owner: SignedUp) =>
    (await db()('idempotency_records').where('scope', owner.account.id).orderBy('idempotency_key').pluck('idempotency_key')) as string[];

  it('deletes expired records batch by batch, keeping unexpired records and the ledger\'s processed commands', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '10.00');
    const keys = Array.from({ length: 5 }, (_, i) => `k${i}-${randomUUID()}`).sort();
    for (const key of keys) await contactUnder(owner, key);
    const transferKey = randomUUID();
    const recipient = await signUp(base());
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient_email: recipient.email, amount: '1.00', currency: 'USD' }, { token: owner.key, idempotencyKey: transferKey });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    await expire(owner, keys.slice(0, 3));

    const swept = await sweepExpiredIdempotencyRecords(db(), { batchSize: 2, pauseMs: 10 });
    assert.ok(swept.deleted >= 3 && swept.batches >= 2, `deleted ${swept.deleted} in ${swept.batches} batches of at most 2`);
    assert.deepEqual(await recordKeys(owner), keys.slice(3), 'the unexpired records stay');
    const processed = await db()('processed_commands').where('account_id', owner.account.id).pluck('command_id');
    assert.ok(processed.includes(idempotentCommandId(owner.account.id, transferKey)), 'the transfer\'s key stays kept by the ledger');
    const replay = await call(base(), 'POST', '/v1/transfers', { recipient_email: recipient.email, amount: '1.00', currency: 'USD' }, { token: owner.key, idempotencyKey: transferKey });
    assert.deepEqual([replay.status, replay.body.transfer_id], [200, sent.body.transfer_id], 'the transfer still replays');
  });

  describe('on the api role\'s schedule', () => {
    let sweeping: TestService;
    before(async () => {
      // An API process of its own that sweeps often; the suite's service answers the requests.
      sweeping = await startService({ ROLES: 'api', IDEMPOTENCY_SWEEP_MS: '200', REDIS_KEY_PREFIX: `${testService().config.redisKeyPrefix}sweep:` });
    });
    after(async () => sweeping?.stop());

    it('removes an expired record by itself, and its key can be used again, for another request', async () => {
      const owner = await signUp(base());
      const expiredKey = randomUUID();
      const keptKey = randomUUID();
      const first = await contactUnder(owner, expiredKey, 'First');
      await contactUnder(owner, keptKey, 'Kept');
      await expire(owner, [expiredKey]);
      await eventually(async () => ((await recordKeys(owner)).includes(expiredKey) ? undefined : true), 10_000, 'the expired record removed');
      assert.deepEqual(await recordKeys(owner), [keptKey]);

      const again = await call(base(), 'POST', '/v1/contacts', { name: 'Second', email: uniqueEmail('contact') }, { token: owner.key, idempotencyKey: expiredKey });
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.notEqual(again.body.id, first, 'a new contact, not a replay');
      assert.equal(again.headers.get('idempotent-replayed'), null);
    });
  });
});
