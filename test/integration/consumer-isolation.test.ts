// Poison messages take no good message with them (issue: reliability): a failed round is
// bisected alone, never merged again with other partitions' work; a schema registry outage while
// decoding is waited out, not dead-lettered; a broken invariant stops instead of dead-lettering.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Consumer } from 'kafkajs';
import { GroupCommit } from '../../consumers/ledger/group-commit';
import { startConsumer, type Delivered } from '../../src/kafka/consumer';
import { AvroCodec, createRegistry } from '../../src/kafka/registry';
import { TOPICS, deadLetterTopic } from '../../src/kafka/topics';
import { testService } from '../hooks';
import { eventually } from '../support/http';

interface EventValue { id: string; resource_id: string }

function sampleEvent(): Record<string, unknown> & EventValue {
  const id = randomUUID();
  return {
    id, type: 'transfer.completed', created_at: new Date().toISOString(), environment: 'sandbox', resource_type: 'transfer',
    resource_id: id, account_id: randomUUID(), data: { id, status: 'completed', amount: '1.00', currency: 'USD', attributes: null },
  };
}

describe('consumer isolation of poison messages', () => {
  const consumers: Consumer[] = [];
  const servers: http.Server[] = [];
  afterEach(async () => {
    while (consumers.length) await consumers.pop()!.disconnect();
    while (servers.length) servers.pop()!.close();
  });

  /** Collects, by message key, what reaches the dead-letter topic of domain.events. */
  async function readDeadLetters(keys: Set<string>): Promise<Map<string, string>> {
    const { runtime } = testService();
    const letters = new Map<string, string>();
    const dlq = runtime.kafka.consumer({ groupId: `${runtime.names.prefix}dlq-reader.${randomUUID()}`, maxWaitTimeInMs: 50 });
    consumers.push(dlq);
    await dlq.connect();
    await dlq.subscribe({ topic: runtime.names.full(deadLetterTopic(TOPICS.domainEvents)), fromBeginning: true });
    await dlq.run({ eachMessage: async ({ message }) => {
      const key = message.key?.toString() ?? '';
      if (keys.has(key)) letters.set(key, message.headers?.['dlq-reason']?.toString() ?? '');
    } });
    return letters;
  }

  async function send(events: EventValue[]): Promise<void> {
    const { runtime } = testService();
    await runtime.producer.send({ topic: runtime.names.full(TOPICS.domainEvents), acks: -1, messages: await Promise.all(
      events.map(async (event) => ({ key: event.resource_id, value: await runtime.codec.encode(TOPICS.domainEvents, event) })),
    ) });
  }

  it('dead-letters only the poison message of a group-committed round spanning many partitions', async () => {
    const { runtime } = testService();
    const good = Array.from({ length: 40 }, sampleEvent);
    const poison = sampleEvent();
    const ours = new Set([...good, poison].map((e) => e.resource_id));
    const applied = new Set<string>();
    // Rounds merge every partition's batch, as the ledger's do: the poison fails the whole round.
    const rounds = new GroupCommit<Delivered<EventValue>>(async (messages) => {
      if (messages.some((m) => m.value.id === poison.id)) throw new Error('refused: poison');
      for (const m of messages) if (ours.has(m.value.resource_id)) applied.add(m.value.id);
    });
    const letters = await readDeadLetters(ours);
    consumers.push(await startConsumer<EventValue>(runtime, {
      groupId: `${runtime.names.prefix}isolation.${randomUUID()}`,
      topic: TOPICS.domainEvents,
      attemptsMax: 1,
      partitionsConsumedConcurrently: runtime.config.kafkaPartitions,
      handleBatch: (messages, { isolating }) => (isolating ? rounds.submitAlone(messages) : rounds.submit(messages)),
    }));
    await send([...good.slice(0, 20), poison, ...good.slice(20)]);

    await eventually(async () => (good.every((e) => applied.has(e.id)) ? true : undefined), 30_000, 'every good message applied');
    await eventually(async () => (letters.has(poison.resource_id) ? true : undefined), 20_000, 'the poison message dead-lettered');
    assert.deepEqual([...letters.keys()], [poison.resource_id], 'only the poison message is dead-lettered');
    assert.match(letters.get(poison.resource_id)!, /refused: poison/);
  });

  it('waits out a schema registry that fails while decoding, and dead-letters nothing', async () => {
    const { runtime } = testService();
    // A registry in front of the real one that refuses its first answers, as during a restart.
    let refusalsLeft = 6;
    const upstream = new URL(runtime.config.schemaRegistryUrl);
    const flaky = http.createServer(async (request, response) => {
      if (refusalsLeft-- > 0) { response.writeHead(503).end('{"message":"unavailable"}'); return; }
      const answer = await fetch(`${upstream.origin}${request.url}`);
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text());
    });
    servers.push(flaky);
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    const registryUrl = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}${upstream.pathname}`;
    const codec = new AvroCodec(createRegistry(registryUrl), runtime.names); // a fresh cache: decoding must ask

    const events = Array.from({ length: 5 }, sampleEvent);
    const ours = new Set(events.map((e) => e.resource_id));
    const applied = new Set<string>();
    const letters = await readDeadLetters(ours);
    consumers.push(await startConsumer<EventValue>({ ...runtime, codec }, {
      groupId: `${runtime.names.prefix}registry-outage.${randomUUID()}`,
      topic: TOPICS.domainEvents,
      attemptsMax: 10, backoffMsInitial: 50, backoffMsMax: 200,
      handleBatch: async (messages) => { for (const m of messages) if (ours.has(m.value.resource_id)) applied.add(m.value.id); },
    }));
    await send(events);
    await eventually(async () => (events.every((e) => applied.has(e.id)) ? true : undefined), 30_000, 'every message applied after the outage');
    assert.ok(refusalsLeft < 0, 'the registry did refuse');
    assert.equal(letters.size, 0, 'nothing was dead-lettered');
  });

  it('stops on a broken invariant instead of dead-lettering the message', async () => {
    const { runtime } = testService();
    const event = sampleEvent();
    const ours = new Set([event.resource_id]);
    const broken: Error[] = [];
    const letters = await readDeadLetters(ours);
    consumers.push(await startConsumer<EventValue>(runtime, {
      groupId: `${runtime.names.prefix}invariant.${randomUUID()}`,
      topic: TOPICS.domainEvents,
      attemptsMax: 1,
      handleBatch: async (messages) => {
        if (messages.some((m) => m.value.id === event.id)) assert.fail('entry does not balance');
      },
      onBrokenInvariant: (error) => { broken.push(error); },
    }));
    await send([event]);
    // Delivered again: the first delivery's batch has ended, and with it any dead letter it sent.
    await eventually(async () => (broken.length > 1 ? true : undefined), 20_000, 'the message delivered again');
    assert.match(broken[0].message, /entry does not balance/);
    // A marker on every partition of the dead-letter topic, sent after that letter would have been:
    // once the reader has every marker, it has read everything before them.
    const markers = Array.from({ length: runtime.config.kafkaPartitions }, (_, partition) => ({ partition, key: `marker-${randomUUID()}`, value: 'marker' }));
    for (const { key } of markers) ours.add(key);
    await runtime.producer.send({ topic: runtime.names.full(deadLetterTopic(TOPICS.domainEvents)), acks: -1, messages: markers });
    await eventually(async () => (markers.every((m) => letters.has(m.key)) ? true : undefined), 10_000, 'the markers read');
    assert.ok(!letters.has(event.resource_id), 'a broken invariant is not bad input');
  });
});
