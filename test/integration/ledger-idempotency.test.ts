// The Idempotency-Key of a route whose answer is the ledger's decision (transfers, the faucet, FX
// execution) is kept by the ledger, in the processed command written with the money (DESIGN.md
// section 5f): the same contract as every other write route (SPEC.md sections 4 and 7), with no
// idempotency row of the API, and the same answers after Redis lost everything.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Money } from '../../ledger/money';
import { db, testService } from '../hooks';
import { signUp, uniqueEmail } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { balances, fund } from '../support/money';
import { deleteKeysStartingWith } from '../support/redis';

/** Deletes every key of this test run in Redis (rate limits, cached keys and answers), as if Redis had restarted empty. */
const flushRunKeysInRedis = (): Promise<number> => deleteKeysStartingWith(testService().config.redisUrl, testService().config.redisKeyPrefix);

describe('idempotency of the routes the ledger decides (DESIGN.md section 5f)', () => {
  const base = () => testService().baseUrl;

  async function pair() {
    const sender = await signUp(base());
    const recipient = await signUp(base());
    await fund(base(), sender.key, 'USD', '100.00');
    return { sender, recipient };
  }

  it('replays a transfer with 200, the same body and Idempotent-Replayed, keeps its record in the ledger alone, and moves money once', async () => {
    const { sender, recipient } = await pair();
    const key = `invoice-${randomUUID()}`;
    const body = { recipient_email: recipient.email, amount: '12.34', currency: 'USD', note: 'rent' };
    const first = await call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const replay = await call(base(), 'POST', '/v1/transfers', { note: 'rent', currency: 'USD', amount: '12.34', recipient_email: recipient.email }, { token: sender.key, idempotencyKey: key });
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, first.body, 'the stored answer, exactly');

    assert.equal((await balances(base(), sender.token)).USD.available, '87.66', 'debited once');
    assert.equal((await db()('transfers').where('account_id', sender.account.id)).length, 1);
    const records = await db()('idempotency_records').where('scope', sender.account.id);
    assert.deepEqual(records.map((r) => r.idempotency_key).filter((k) => k === key), [], 'the API keeps no record of the key');
    const processed = await db()('processed_commands').where({ account_id: sender.account.id, idempotency_key: key });
    assert.equal(processed.length, 1, 'the ledger keeps one');
    assert.match(processed[0].fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(processed[0].outcome.transfer.id, first.body.transfer_id);
  });

  it('caches the final answer in Redis for fast replays, never a provisional answer or a conflict', async () => {
    const { sender, recipient } = await pair();
    const key = randomUUID();
    const body = { recipient_email: recipient.email, amount: '2.00', currency: 'USD' };
    const first = await call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    expectError(await call(base(), 'POST', '/v1/transfers', { ...body, amount: '3.00' }, { token: sender.key, idempotencyKey: key }), 409, 'idempotency_conflict');
    const raw = new Redis(testService().config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await raw.connect();
    try {
      const [, keys] = await raw.scan('0', 'MATCH', `${testService().config.redisKeyPrefix}idem:ledger:*:${key}`, 'COUNT', 100_000);
      assert.equal(keys.length, 1, 'one entry, for the API key that sent it');
      const cached = JSON.parse((await raw.get(keys[0]))!);
      assert.deepEqual([cached.status, cached.body], [200, first.body], 'what a replay answers: the stored answer, 201 as 200');
    } finally {
      raw.disconnect();
    }
    const replay = await call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key });
    assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed'), replay.body], [200, 'true', first.body]);
    expectError(await call(base(), 'POST', '/v1/transfers', { ...body, amount: '3.00' }, { token: sender.key, idempotencyKey: key }), 409, 'idempotency_conflict', 'Idempotency-Key', 'a conflict answered from the cache');
  });

  it('refuses, with 409 idempotency_conflict and nothing moved, every other request under a key the ledger holds', async () => {
    const { sender, recipient } = await pair();
    const key = randomUUID();
    const body = { recipient_email: recipient.email, amount: '5.00', currency: 'USD' };
    const first = await call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const table: Array<[string, string, unknown, Record<string, string>?]> = [
      ['another amount', '/v1/transfers', { ...body, amount: '6.00' }],
      ['another recipient', '/v1/transfers', { ...body, recipient_email: uniqueEmail() }],
      ['the same body with a sandbox scenario', '/v1/transfers', body, { 'Sandbox-Scenario': 'decline' }],
      ['another route the ledger decides (faucet)', '/v1/sandbox/faucet', { currency: 'USD', amount: '5.00' }],
      ['a route whose record the API keeps (contacts)', '/v1/contacts', { name: 'Ada', email: uniqueEmail('contact') }],
    ];
    for (const [what, path, other, headers] of table) {
      expectError(await call(base(), 'POST', path, other, { token: sender.key, idempotencyKey: key, headers }), 409, 'idempotency_conflict', 'Idempotency-Key', what);
    }
    const after = await balances(base(), sender.token);
    assert.equal(after.USD.available, '95.00', 'only the first transfer moved money');
    assert.equal((await call(base(), 'GET', '/v1/contacts', undefined, { token: sender.key })).body.data.length, 0, 'no contact was created');
    const replay = await call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key });
    assert.deepEqual([replay.status, replay.body], [200, first.body], 'the original still replays');
  });

  it('refuses a transfer under a key a route of the API already used: the ledger moves nothing', async () => {
    const { sender, recipient } = await pair();
    const key = randomUUID();
    const contact = await call(base(), 'POST', '/v1/contacts', { name: 'Grace', email: uniqueEmail('contact') }, { token: sender.key, idempotencyKey: key });
    assert.equal(contact.status, 201, JSON.stringify(contact.body));
    const refused = await call(base(), 'POST', '/v1/transfers', { recipient_email: recipient.email, amount: '1.00', currency: 'USD' }, { token: sender.key, idempotencyKey: key });
    expectError(refused, 409, 'idempotency_conflict', 'Idempotency-Key');
    assert.equal((await db()('transfers').where('account_id', sender.account.id)).length, 0);
    assert.equal((await balances(base(), sender.token)).USD.available, '100.00');
  });

  it('executes 50 concurrent transfers with one key once: one 201, every other answer its replay (or a provisional 202), never 409', async () => {
    const { sender, recipient } = await pair();
    const key = randomUUID();
    const body = { recipient_email: recipient.email, amount: '1.25', currency: 'USD' };
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key })));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, `statuses: ${statuses.join(',')}`);
    assert.ok(statuses.every((s) => s === 200 || s === 201 || s === 202), `statuses: ${statuses.join(',')}`);
    const created = answers.find((a) => a.status === 201)!;
    for (const replay of answers.filter((a) => a.status === 200)) {
      assert.deepEqual(replay.body, created.body);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    }
    assert.equal(new Set(answers.map((a) => a.body.transfer_id)).size, 1, 'every answer names the one transfer');
    assert.equal((await balances(base(), sender.token)).USD.available, '98.75', 'debited once');
    assert.equal((await balances(base(), recipient.token)).USD.available, '1.25', 'credited once');
  });

  it('gives the same replays and conflicts after Redis lost everything, for transfers, the faucet and FX execution', async () => {
    const { sender, recipient } = await pair();
    const transferKey = randomUUID();
    const transferBody = { recipient_email: recipient.email, amount: '3.00', currency: 'USD' };
    const transfer = await call(base(), 'POST', '/v1/transfers', transferBody, { token: sender.key, idempotencyKey: transferKey });
    const faucetKey = randomUUID();
    const faucetBody = { currency: 'EUR', amount: '40.00' };
    const faucet = await call(base(), 'POST', '/v1/sandbox/faucet', faucetBody, { token: sender.key, idempotencyKey: faucetKey });
    const quote = await call(base(), 'POST', '/v1/fx/quote', { from_currency: 'EUR', to_currency: 'USD', from_amount: '10.00' }, { token: sender.key, idempotencyKey: randomUUID() });
    assert.equal(quote.status, 201, JSON.stringify(quote.body));
    const executeKey = randomUUID();
    const execution = await call(base(), 'POST', '/v1/fx/execute', { quote_id: quote.body.id }, { token: sender.key, idempotencyKey: executeKey });
    assert.deepEqual([transfer.status, faucet.status, execution.status], [201, 201, 201], JSON.stringify([transfer.body, faucet.body, execution.body]));

    // Each key with its own request, and with another request.
    const requests: Array<[string, string, unknown, unknown]> = [
      [transferKey, '/v1/transfers', transferBody, { ...transferBody, amount: '2.00' }],
      [faucetKey, '/v1/sandbox/faucet', faucetBody, { ...faucetBody, amount: '2.00' }],
      [executeKey, '/v1/fx/execute', { quote_id: quote.body.id }, { quote_id: randomUUID() }],
    ];
    const answersNow = async () => Promise.all(requests.map(async ([key, path, body, other]) => {
      const replay = await call(base(), 'POST', path, body, { token: sender.key, idempotencyKey: key });
      const conflict = await call(base(), 'POST', path, other, { token: sender.key, idempotencyKey: key });
      return { replay: [replay.status, replay.headers.get('idempotent-replayed'), replay.body], conflict: [conflict.status, conflict.body.error] };
    }));
    const before = await answersNow();
    assert.deepEqual(before.map((a) => a.replay), [
      [200, 'true', transfer.body], [200, 'true', faucet.body], [200, 'true', execution.body],
    ]);
    assert.deepEqual(before.map((a) => a.conflict), [[409, 'idempotency_conflict'], [409, 'idempotency_conflict'], [409, 'idempotency_conflict']]);

    assert.ok(await flushRunKeysInRedis() >= 1, 'Redis held keys of this run');
    assert.deepEqual(await answersNow(), before, 'the same answers after Redis lost everything');
    const after = await balances(base(), sender.token);
    assert.deepEqual([after.USD.available, after.EUR.available], [new Money('97.00').plus(execution.body.quote.to_amount).toFixed(2), '30.00'], 'nothing executed twice');
  });
});
