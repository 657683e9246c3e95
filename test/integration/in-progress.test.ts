// Duplicates of a request still in progress (DESIGN.md section 5): never 409, which SPEC.md
// section 7 tells clients not to retry; a claim left by a process that died lapses within seconds;
// the ledger client neither promises a decision for a command it did not send nor loses one of
// two requests waiting for the same command.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { REPLY_TO_HEADER } from '../../ledger/messages';
import { isDomainError } from '../../src/domain-error';
import type { RouteDef, RouteRequest } from '../../src/http/route';
import { fingerprint } from '../../src/http/route';
import { derivedUuid } from '../../src/idempotency/derived-ids';
import { IdempotencyGuard } from '../../src/idempotency/guard';
import { deadLetterTopic, TOPICS } from '../../src/kafka/topics';
import { LedgerClient } from '../../src/ledger-client/client';
import { testService } from '../hooks';
import { signUp, uniqueEmail } from '../support/accounts';
import { call, eventually } from '../support/http';
import { fund, transferReaches } from '../support/money';

describe('requests in progress', () => {
  const base = () => testService().baseUrl;

  it('answers duplicates racing one transfer with its decision or a provisional 202, never 409, and moves money once', async () => {
    const sender = await signUp(base());
    const recipient = await signUp(base());
    await fund(base(), sender.key, 'EUR', '50.00');
    const idempotencyKey = randomUUID();
    const body = { recipient_email: recipient.account.email, amount: '7.00', currency: 'EUR' };
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey })));
    const statuses = answers.map((a) => a.status);
    for (const answer of answers) {
      assert.ok([200, 201, 202].includes(answer.status), `got ${answer.status} ${JSON.stringify(answer.body)}`);
      if (answer.status === 202) assert.equal(answer.headers.get('retry-after'), '1');
    }
    const ids = new Set(answers.map((a) => a.body.transfer_id));
    assert.equal(ids.size, 1, `one transfer id for one key: ${[...ids].join(', ')} (${statuses.join(',')})`);
    const [transferId] = ids;
    await transferReaches(base(), sender.key, transferId, 'completed');
    const { db } = testService().runtime;
    assert.equal((await db('transfers').where('account_id', sender.account.id)).length, 1);
  });

  it('answers a duplicate that outwaits the first request provisionally (202) or with a retriable 503, never 409', async () => {
    const { runtime } = testService();
    const guard = new IdempotencyGuard(runtime.db, runtime.redis, 200);
    const key = randomUUID();
    const request = { requestId: randomUUID(), params: {}, query: {}, body: { n: 1 }, principal: null, idempotencyKey: key, fingerprint: fingerprint('POST', '/v1/test', { n: 1 }), koa: { path: '/v1/test' } } as unknown as RouteRequest;
    let finish!: () => void;
    const slow = new Promise<void>((resolve) => { finish = resolve; });
    const route = (provisional?: RouteDef['provisional']) => ({ method: 'POST', path: '/v1/test', provisional } as unknown as RouteDef);
    const first = guard.run(request, route(), async () => { await slow; return { status: 201, body: { done: true } }; });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first holds the claim

    const pending = { status: 202, final: false, headers: { 'Retry-After': '1' }, body: { status: 'pending' } };
    assert.deepEqual(await guard.run(request, route(async () => pending), async () => assert.fail('a duplicate must not execute')), pending);
    await assert.rejects(guard.run(request, route(), async () => assert.fail('a duplicate must not execute')), (error) => {
      assert.ok(isDomainError(error));
      assert.equal(error.code, 'service_unavailable');
      assert.equal(error.headers['Retry-After'], '1');
      return true;
    });
    finish();
    assert.equal((await first).status, 201);
    const replay = await guard.run(request, route(), async () => assert.fail('a replay must not execute'));
    assert.deepEqual([replay.status, replay.body], [200, { done: true }]);
  });

  it('lets a retry take over the claim of a process that died mid-request, within seconds', async () => {
    const owner = await signUp(base());
    const idempotencyKey = randomUUID();
    const body = { name: 'Ada', email: uniqueEmail('contact') };
    const { db } = testService().runtime;
    // The row a process leaves when it dies after claiming the key: in progress, lease not renewed.
    await db('idempotency_records').insert({
      scope: owner.account.id, idempotency_key: idempotencyKey, fingerprint: fingerprint('POST', '/v1/contacts', body),
      state: 'in_progress', locked_until: db.raw(`now() + interval '5 seconds'`), expires_at: db.raw(`now() + interval '1 day'`),
    });
    const started = Date.now();
    let answer = await call(base(), 'POST', '/v1/contacts', body, { token: owner.key, idempotencyKey });
    for (let attempt = 0; attempt < 20 && answer.status === 503; attempt++) {
      assert.equal(answer.body.error, 'service_unavailable');
      assert.equal(answer.headers.get('retry-after'), '1');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      answer = await call(base(), 'POST', '/v1/contacts', body, { token: owner.key, idempotencyKey });
    }
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.ok(Date.now() - started < 15_000, 'the dead claim lapsed within its lease');
  });

  it('gives the decision to both requests waiting for one command', async () => {
    const { runtime } = testService();
    const owner = await signUp(base());
    const client = new LedgerClient(runtime);
    await client.start();
    try {
      const commandId = derivedUuid('test.faucet', randomUUID());
      const payload = { entry_id: derivedUuid('entry', commandId), currency: 'USD', amount: '3' };
      const [first, second] = await Promise.all([
        client.execute('faucet.credit', commandId, owner.account.id, payload, 10_000),
        client.execute('faucet.credit', commandId, owner.account.id, payload, 10_000),
      ]);
      assert.ok(first && second, 'neither request was left without the decision');
      assert.equal(first.outcome.kind, 'faucet_credit');
      assert.deepEqual(second.outcome, first.outcome);
      assert.deepEqual([first.replayed, second.replayed], [false, true], 'each request got an answer of its own: the decision, then its replay');
    } finally {
      await client.stop();
    }
  });

  it('refuses with a retriable 503 a command it has no room to wait for, and does not send it', async () => {
    const { runtime } = testService();
    const owner = await signUp(base());
    const client = new LedgerClient(runtime, 1);
    await client.start();
    try {
      const payload = (commandId: string) => ({ entry_id: derivedUuid('entry', commandId), currency: 'USD', amount: '1' });
      const admitted = derivedUuid('test.faucet', randomUUID());
      const refused = derivedUuid('test.faucet', randomUUID());
      const waiting = client.execute('faucet.credit', admitted, owner.account.id, payload(admitted), 10_000);
      await assert.rejects(client.execute('faucet.credit', refused, owner.account.id, payload(refused), 10_000), (error) => {
        assert.ok(isDomainError(error));
        assert.equal(error.status, 503);
        assert.equal(error.headers['Retry-After'], '1');
        return true;
      });
      assert.equal((await waiting)?.outcome.kind, 'faucet_credit');
      // Commands of one account are decided in order: the admitted one is decided, so the refused one would have been too.
      assert.equal((await runtime.db('processed_commands').where('command_id', refused)).length, 0);
    } finally {
      await client.stop();
    }
  });

  it('skips, without decoding, a reply whose reply-to header names another API process', async () => {
    const { runtime } = testService();
    const owner = await signUp(base());
    const client = new LedgerClient(runtime);
    await client.start();
    const replies = runtime.names.full(TOPICS.ledgerReplies);
    const deadLetters = runtime.names.full(deadLetterTopic(TOPICS.ledgerReplies));
    const deadLettered = async () => (await runtime.admin.fetchTopicOffsets(deadLetters)).reduce((sum, p) => sum + Number(p.high), 0);
    // Waits for a decision of this client: every reply sent before it on its partition was read by then.
    const decided = async () => {
      const commandId = derivedUuid('test.faucet', randomUUID());
      const outcome = await client.execute('faucet.credit', commandId, owner.account.id, { entry_id: derivedUuid('entry', commandId), currency: 'USD', amount: '1' }, 10_000);
      assert.equal(outcome?.outcome.kind, 'faucet_credit');
    };
    try {
      await decided();
      const before = await deadLettered();
      // Bytes no registry can decode, on every partition: decoded, they would go to the dead-letter topic.
      const garbage = (headers: Record<string, string>) => Array.from({ length: runtime.config.kafkaPartitions }, (_, partition) => ({ partition, value: Buffer.from('not avro'), headers }));
      await runtime.producer.send({ topic: replies, acks: -1, messages: garbage({ [REPLY_TO_HEADER]: randomUUID() }) });
      await decided();
      assert.equal(await deadLettered(), before, 'replies for another process are not decoded');

      // Control: the same bytes without the header are decoded, found undecodable, and dead-lettered.
      await runtime.producer.send({ topic: replies, acks: -1, messages: garbage({}) });
      await decided();
      await eventually(async () => ((await deadLettered()) > before ? true : undefined), 10_000, 'the headerless garbage to be dead-lettered');
    } finally {
      await client.stop();
    }
  });
});

