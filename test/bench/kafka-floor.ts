// The Kafka request/reply floor on this machine, measured with the service's own Kafka client
// and batcher: requester → request topic → responder (a consumer group, eachBatch, one send
// per batch) → reply topic → requester, closed loop with a few requests in flight. A POST that
// waits for the ledger cannot beat one such round trip; the latency benchmark prints both.
import { createKafka, createProducer } from '../../src/kafka/client'; // before kafkajs: it installs the kafkajs fixes
import { ProducerBatcher } from '../../src/kafka/batcher';
import { ensureTopics } from '../../src/kafka/topics';
import { KAFKA_BROKERS, percentile } from './harness';

export interface Floor { perSecond: number; p50: number; p99: number }

export async function measureKafkaFloor(prefix: string, partitions = 12, inFlight = 4, seconds = 10): Promise<Floor> {
  const kafka = createKafka(KAFKA_BROKERS.split(','), 'bench-floor');
  const requestTopic = `${prefix}floor.requests`;
  const replyTopic = `${prefix}floor.replies`;
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [requestTopic, replyTopic], partitions);
  const requestProducer = await createProducer(kafka);
  const replyProducer = await createProducer(kafka);
  const requests = new ProducerBatcher(requestProducer);
  const waiting = new Map<string, () => void>();

  const responder = kafka.consumer({ groupId: `${prefix}floor.responder`, maxWaitTimeInMs: 500 });
  const requester = kafka.consumer({ groupId: `${prefix}floor.requester`, maxWaitTimeInMs: 500 });
  const joined = (consumer: typeof responder) => new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  const bothJoined = Promise.all([joined(responder), joined(requester)]);
  for (const [consumer, topic] of [[responder, requestTopic], [requester, replyTopic]] as const) {
    await consumer.connect();
    // From the beginning: the topics are this run's own, and a group that rebalances after its
    // first join (it happens) would otherwise start at the end and skip requests sent meanwhile.
    await consumer.subscribe({ topic, fromBeginning: true });
  }
  await responder.run({
    partitionsConsumedConcurrently: partitions,
    eachBatch: async ({ batch }) => {
      await replyProducer.send({ topic: replyTopic, acks: -1, messages: batch.messages.map(({ key, value }) => ({ key, value })) });
    },
  });
  await requester.run({
    partitionsConsumedConcurrently: partitions,
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) {
        const id = message.value!.toString();
        waiting.get(id)?.();
        waiting.delete(id);
      }
    },
  });
  await bothJoined;

  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (performance.now() < end) {
      const id = String(next++);
      const sent = performance.now();
      await new Promise<void>((resolve) => {
        waiting.set(id, resolve);
        void requests.send(requestTopic, { key: id, value: id });
      });
      latencies.push(performance.now() - sent);
    }
  }));
  const elapsedS = (performance.now() - started) / 1000;
  await Promise.all([responder.disconnect(), requester.disconnect(), requestProducer.disconnect(), replyProducer.disconnect()]);
  await admin.deleteTopics({ topics: [requestTopic, replyTopic] });
  await admin.disconnect();
  latencies.sort((a, b) => a - b);
  return { perSecond: Math.round(latencies.length / elapsedS), p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}
