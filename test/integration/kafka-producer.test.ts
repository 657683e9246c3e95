// The idempotent producer after a produce request whose reply was lost: the broker appended the
// batch, but the client saw a timeout. kafkajs rolls the partition's sequence back then, so the
// next batch reuses the lost one's numbers and the broker takes it for a duplicate: it answers
// success and stores nothing (or, when the counts differ, refuses every later batch as out of
// order). patches/kafkajs+2.2.4.patch gives the producer a fresh id instead.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { TcpProxy } from '../support/tcp-proxy';
import type { Producer } from 'kafkajs';
import { createKafka, createProducer } from '../../src/kafka/client';
import { sendBatches } from '../../src/kafka/send-batches';
import { ensureTopics } from '../../src/kafka/topics';
import { eventually } from '../support/http';

describe('kafka producer after a lost produce reply', function () {
  this.timeout(60_000);
  let proxy: TcpProxy;
  const topic = `${process.env.KAFKA_TOPIC_PREFIX}producer-replay.${randomUUID()}`;
  const admin = new Kafka({ brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), logLevel: logLevel.NOTHING }).admin();

  before(async () => {
    const [host, port] = process.env.KAFKA_FAULT_LISTENER!.split(':');
    proxy = await TcpProxy.start(host, Number(port), Number(process.env.KAFKA_FAULT_PROXY_PORT));
    await admin.connect();
    await ensureTopics(admin, [topic], 1);
  });
  after(async () => {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
    await proxy?.stop();
  });

  it('stores the batch sent after the lost one, and keeps sending', async () => {
    const kafka = new Kafka({
      brokers: [`127.0.0.1:${process.env.KAFKA_FAULT_PROXY_PORT}`], logLevel: logLevel.NOTHING,
      requestTimeout: 1_000, retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 200 },
    });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    try {
      await producer.send({ topic, acks: -1, messages: [{ value: 'a' }] });
      proxy.dropReplies = true;
      await assert.rejects(producer.send({ topic, acks: -1, messages: [{ value: 'b' }] }), 'the reply of b is lost');
      proxy.dropReplies = false;
      await proxy.cut(); // the connection that lost a reply goes; the producer reconnects
      await proxy.restore();
      await eventually(async () => producer.send({ topic, acks: -1, messages: [{ value: 'c' }] }).then(() => true, () => undefined), 20_000, 'c is sent');
      await producer.send({ topic, acks: -1, messages: [{ value: 'd' }, { value: 'e' }] });
    } finally {
      await producer.disconnect();
    }
    const stored = await readAll(topic);
    assert.deepEqual([...new Set(stored)], ['a', 'b', 'c', 'd', 'e'], `stored: ${stored.join(',')}`);
  });
});

async function readAll(topic: string): Promise<string[]> {
  const kafka = new Kafka({ brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `${topic}.reader` });
  const values: string[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const admin = kafka.admin();
  await admin.connect();
  const [{ high }] = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  let seen = 0;
  await consumer.run({ eachMessage: async ({ message }) => { values.push(String(message.value)); seen = Number(message.offset) + 1; } });
  await eventually(async () => (seen >= Number(high) ? true : undefined), 20_000, `all ${high} messages read`);
  await consumer.disconnect();
  return values;
}

describe('kafka producer: a batch larger than the broker takes in one request', function () {
  this.timeout(60_000);
  const topic = `${process.env.KAFKA_TOPIC_PREFIX}producer-large.${randomUUID()}`;
  const kafka = createKafka((process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), 'producer-large');
  const admin = kafka.admin();
  let producer: Producer;
  before(async () => {
    await admin.connect();
    await ensureTopics(admin, [topic], 1);
    producer = await createProducer(kafka);
  });
  after(async () => {
    await producer.disconnect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  });
  const stored = async () => Number((await admin.fetchTopicOffsets(topic))[0].high);
  // 2.4 MB for one partition, as a large ledger round puts on its busiest partition and more.
  const messages = Array.from({ length: 6_000 }, (_, i) => ({ key: 'one-account', value: Buffer.from(`${String(i).padStart(6, '0')}${'x'.repeat(394)}`) }));

  it('is refused whole when sent as one request (the broker limit is real)', async () => {
    const control = await createProducer(kafka);
    try {
      await assert.rejects(control.sendBatch({ topicMessages: [{ topic, messages }], acks: -1 }), { type: 'MESSAGE_TOO_LARGE' });
    } finally {
      await control.disconnect();
    }
    assert.equal(await stored(), 0);
  });

  it('is stored whole and in order by sendBatches, in requests under the limit', async () => {
    await sendBatches(producer, [{ topic, messages }]);
    assert.equal(await stored(), messages.length);
    const consumer = kafka.consumer({ groupId: `${topic}.reader` });
    const seen: number[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => { seen.push(Number(message.value!.subarray(0, 6).toString())); } });
    await eventually(async () => (seen.length >= messages.length ? true : undefined), 30_000, 'every message to be read back');
    await consumer.disconnect();
    assert.deepEqual(seen, messages.map((_, i) => i));
  });
});
