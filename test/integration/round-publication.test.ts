// Committed rounds on Kafka (consumers/ledger/publisher.ts), small and large ones one after
// another: every account event the ledger numbered reaches domain.events, and each resource's
// events (one key, one partition) in the order the ledger numbered them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { ACCOUNT_ID_HEADER, TOPICS } from '../../src/kafka/topics';
import { db, testService } from '../hooks';
import { signUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { fund, transfer } from '../support/money';

describe('round publication', function () {
  // The reader reads the worker's whole domain.events from the beginning.
  this.timeout(90_000);
  let reader: Consumer | null = null;
  afterEach(async () => { await reader?.disconnect(); reader = null; });

  it('publishes small and large rounds, mixed: every event on domain.events, each resource\'s in order', async () => {
    const { baseUrl: base, runtime } = testService();
    const [sender, recipient] = await Promise.all([signUp(base), signUp(base)]);
    await fund(base, sender.key, 'USD', '1000.00');
    // A batch of 60 transfers is one round of hundreds of messages; each single transfer around it
    // is a round of a few.
    const item = { recipient_email: recipient.account.email, amount: '1.00', currency: 'USD' };
    const singles = () => Array.from({ length: 5 }, () => transfer(base, sender.key, { ...item, amount: '0.50' }));
    const answers = await Promise.all([
      ...singles(),
      call(base, 'POST', '/v1/transfer-batches', { atomic: true, transfers: Array.from({ length: 60 }, () => item) }, { token: sender.key, idempotencyKey: randomUUID() }),
      ...singles(),
    ]);
    for (const answer of answers) assert.equal(answer.status, 201, JSON.stringify(answer.body));

    const numbered: Array<{ id: string; account_seq: string }> = await db()('account_events').where('account_id', sender.account.id).select('id', 'account_seq');
    const seqOf = new Map(numbered.map((e) => [e.id, Number(e.account_seq)]));
    assert.ok(seqOf.size > 200, `the rounds numbered ${seqOf.size} events`);

    // Every message of the account, in each partition's order.
    const seen: Array<{ partition: number; event: DomainEventEnvelope }> = [];
    reader = runtime.kafka.consumer({ groupId: `${runtime.names.prefix}publication-reader.${randomUUID()}`, maxWaitTimeInMs: 50 });
    await reader.connect();
    await reader.subscribe({ topic: runtime.names.full(TOPICS.domainEvents), fromBeginning: true });
    await reader.run({ eachMessage: async ({ partition, message }) => {
      // Other accounts' events (the rest of the worker's history) are skipped by their header, undecoded.
      if (message.headers?.[ACCOUNT_ID_HEADER]?.toString() !== sender.account.id) return;
      const event = await runtime.codec.decode<DomainEventEnvelope>(message.value!);
      if (event.account_id === sender.account.id) seen.push({ partition, event });
    } });
    await eventually(async () => (new Set(seen.map((s) => s.event.id)).size >= seqOf.size ? true : undefined), 60_000, 'every numbered event on domain.events');

    assert.deepEqual([...new Set(seen.map((s) => s.event.id))].sort(), [...seqOf.keys()].sort(), 'the events the ledger numbered, no other');
    // Readers drop a copy published again (the sweeper) by its id: the first copies are in order.
    const first = seen.filter((s, i) => seen.findIndex((f) => f.event.id === s.event.id) === i);
    const lastByResource = new Map<string, number>();
    for (const { event } of first) {
      assert.equal(event.account_seq, seqOf.get(event.id), 'the number the ledger gave it');
      const last = lastByResource.get(event.resource_id) ?? 0;
      assert.ok(event.account_seq > last, `${event.resource_id}: event ${event.account_seq} after ${last}`);
      lastByResource.set(event.resource_id, event.account_seq);
    }
  });
});
