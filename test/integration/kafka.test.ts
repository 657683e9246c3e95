// The Kafka plumbing on the real broker and schema registry: Avro round trip, commit after
// success, poison messages set aside in the dead-letter topic without stopping the consumer, and
// domain.events evolved compatibly (v7's metadata over v6).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SchemaType, COMPATIBILITY } from '@kafkajs/confluent-schema-registry';
import type { Consumer } from 'kafkajs';
import { AvroCodec, SCHEMAS_DIRECTORY, createRegistry, readSchemaFiles } from '../../src/kafka/registry';
import { toPublicEvent } from '../../src/notifications/frame';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { startConsumer, type Delivered } from '../../src/kafka/consumer';
import { TOPICS, TopicNames, deadLetterTopic } from '../../src/kafka/topics';
import { testService } from '../hooks';
import { eventually } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';

interface EventValue { id: string; type: string; resource_id: string; data: { id: string; status: string; amount: string | null; currency: string | null; attributes: string | null; metadata?: Record<string, string> | null } }

function sampleEvent(status: string, amount: string | null = '10.00'): EventValue & Record<string, unknown> {
  const id = randomUUID();
  return {
    id, type: `transfer.${status}`, created_at: new Date().toISOString(), environment: 'sandbox',
    resource_type: 'transfer', resource_id: id, account_id: randomUUID(),
    data: { id, status, amount, currency: 'USD', attributes: null },
  };
}

describe('Kafka plumbing on the real broker and registry', () => {
  const consumers: Consumer[] = [];
  afterEach(async () => { while (consumers.length) await consumers.pop()!.disconnect(); });

  it('registers every topic schema under <topic>-value with BACKWARD compatibility', async () => {
    const { runtime } = testService();
    const subject = `${runtime.names.full(TOPICS.domainEvents)}-value`;
    const response = await fetch(`${runtime.config.schemaRegistryUrl}/config/${encodeURIComponent(subject)}`);
    assert.equal(response.status, 200);
    const body = await response.json() as { compatibilityLevel: string };
    assert.equal(body.compatibilityLevel, 'BACKWARD');
    assert.equal(await runtime.codec.registry.getLatestSchemaId(subject), runtime.codec.schemaId(TOPICS.domainEvents));
  });

  it('asks the registry again when a registration goes unanswered, and gives up naming the subject when none is', async () => {
    const { runtime } = testService();
    const registry = new URL(runtime.config.schemaRegistryUrl);
    const proxy = await TcpProxy.start(registry.hostname, Number(registry.port));
    try {
      proxy.dropReplies = true;
      const names = new TopicNames(`${runtime.config.kafkaTopicPrefix}unanswered.${randomUUID().slice(0, 8)}.`);
      const codec = new AvroCodec(createRegistry(`http://127.0.0.1:${proxy.port}${registry.pathname}`), names, { attemptMs: 500, attempts: 2 });
      const files = readSchemaFiles().filter((file) => file.topic === TOPICS.domainEvents);
      await assert.rejects(codec.registerAll(files), /did not answer registering .*domain\.events-value in 2 attempts of 500 ms/);

      // The registry takes the first request and its answer is lost; the second is answered.
      setTimeout(() => { proxy.dropReplies = false; }, 1_500);
      const ids = await new AvroCodec(createRegistry(`http://127.0.0.1:${proxy.port}${registry.pathname}`), names, { attemptMs: 1_000, attempts: 3 }).registerAll(files);
      assert.equal(ids.get(TOPICS.domainEvents), await runtime.codec.registry.getLatestSchemaId(`${names.full(TOPICS.domainEvents)}-value`));
    } finally {
      await proxy.stop();
    }
  });

  it('sends an event through the broker and reads it back decoded', async () => {
    const { runtime } = testService();
    const event = sampleEvent('completed');
    event.data.metadata = { order_id: 'A-17', 'a key': '' };
    const received: Array<Delivered<EventValue>> = [];
    consumers.push(await startConsumer<EventValue>(runtime, {
      groupId: `${runtime.names.prefix}roundtrip.${randomUUID()}`,
      topic: TOPICS.domainEvents,
      handleBatch: async (messages) => { received.push(...messages); },
    }));
    const value = await runtime.codec.encode(TOPICS.domainEvents, event);
    assert.equal(value.readUInt8(0), 0, 'Confluent wire format: magic byte 0');
    assert.equal(value.readUInt32BE(1), runtime.codec.schemaId(TOPICS.domainEvents), 'then the schema id');
    await runtime.producer.send({ topic: runtime.names.full(TOPICS.domainEvents), acks: -1, messages: [{ key: event.resource_id, value }] });

    const got = await eventually(async () => received.find((m) => m.value.id === event.id), 20_000, 'the event');
    assert.equal(got.key, event.resource_id);
    assert.deepEqual({ ...got.value.data, metadata: { ...got.value.data.metadata } }, event.data);
  });

  it('evolves domain.events compatibly: v7 (metadata, default null) registers over v6 under BACKWARD, and an event written with v6 reads as one without metadata', async () => {
    const { runtime } = testService();
    const subject = `${runtime.names.prefix}compatibility-${randomUUID()}-value`;
    const schema = (version: number) => ({ type: SchemaType.AVRO as const, schema: fs.readFileSync(path.join(SCHEMAS_DIRECTORY, `domain.events.v${version}.avsc`), 'utf8') });
    const { id: v6 } = await runtime.codec.registry.register(schema(6), { subject, compatibility: COMPATIBILITY.BACKWARD });
    const { id: v7 } = await runtime.codec.registry.register(schema(7), { subject });
    assert.notEqual(v7, v6);
    const event = { ...sampleEvent('completed'), account_seq: 1 };
    const written = await runtime.codec.decode<DomainEventEnvelope>(await runtime.codec.registry.encode(v6, event));
    assert.equal(written.data.metadata ?? null, null);
    assert.equal('metadata' in toPublicEvent(written).data, false, 'a v6 event shows no metadata');
    const withMetadata = await runtime.codec.decode<DomainEventEnvelope>(await runtime.codec.registry.encode(v7, { ...event, data: { ...event.data, metadata: { order_id: 'A-17' } } }));
    assert.deepEqual(toPublicEvent(withMetadata).data.metadata, { order_id: 'A-17' });
  });

  it('sets poison messages aside in the dead-letter topic and keeps consuming', async () => {
    const { runtime } = testService();
    const topic = runtime.names.full(TOPICS.domainEvents);
    const key = `poison-${randomUUID()}`;
    const rejected = sampleEvent('failed');
    const good = sampleEvent('completed');
    const applied: string[] = [];
    // Dead letters by source offset: a rebalance may redeliver a batch, and so dead-letter twice.
    const deadLetters = new Map<string, { reason: string; value: Buffer | null }>();

    consumers.push(await startConsumer<EventValue>(runtime, {
      groupId: `${runtime.names.prefix}poison.${randomUUID()}`,
      topic: TOPICS.domainEvents,
      attemptsMax: 2,
      handleBatch: async (messages) => {
        if (messages.some((m) => m.value.id === rejected.id)) throw new Error('handler refuses this event');
        applied.push(...messages.map((m) => m.value.id));
      },
    }));
    const dlq = runtime.kafka.consumer({ groupId: `${runtime.names.prefix}dlq-reader.${randomUUID()}`, maxWaitTimeInMs: 50 });
    consumers.push(dlq);
    await dlq.connect();
    await dlq.subscribe({ topic: runtime.names.full(deadLetterTopic(TOPICS.domainEvents)), fromBeginning: true });
    await dlq.run({ eachMessage: async ({ message }) => {
      if (message.key?.toString() !== key) return;
      deadLetters.set(message.headers?.['dlq-source-offset']?.toString() ?? '', { reason: message.headers?.['dlq-reason']?.toString() ?? '', value: message.value });
    } });

    // Same key, so all three land on one partition in this order: garbage, rejected, good.
    await runtime.producer.send({ topic, acks: -1, messages: [
      { key, value: Buffer.from('not avro at all') },
      { key, value: await runtime.codec.encode(TOPICS.domainEvents, rejected) },
      { key, value: await runtime.codec.encode(TOPICS.domainEvents, good) },
    ] });

    await eventually(async () => (applied.includes(good.id) ? true : undefined), 20_000, 'the good message after the poison ones');
    await eventually(async () => (deadLetters.size >= 2 ? true : undefined), 20_000, 'two dead letters');
    assert.ok(!applied.includes(rejected.id));
    const [garbage, refused] = [...deadLetters].sort(([a], [b]) => Number(a) - Number(b)).map(([, letter]) => letter);
    assert.equal(deadLetters.size, 2, 'only the two poison messages are set aside');
    assert.match(garbage.reason, /^undecodable/);
    assert.equal(garbage.value?.toString(), 'not avro at all');
    assert.match(refused.reason, /handler failed: handler refuses this event/);
  });
});
