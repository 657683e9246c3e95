// The idempotent producer after a produce request whose reply was lost: the broker appended the
// batch, but the client saw a timeout. kafkajs rolls the partition's sequence back then, so the
// next batch reuses the lost one's numbers and the broker takes it for a duplicate: it answers
// success and stores nothing (or, when the counts differ, refuses every later batch as out of
// order). patches/kafkajs+2.2.4.patch gives the producer a fresh id instead.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { TcpProxy } from '../support/tcp-proxy';
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
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
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
