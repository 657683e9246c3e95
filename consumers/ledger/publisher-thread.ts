// The ledger's outbox publisher thread: encodes committed rounds (Avro) and sends them to Kafka,
// one after another in the order they were committed, while the main thread decides and writes
// the next round. Encoding and producing a round of 2,000 transfers (some 14,000 messages) took
// about 40 % of the ledger thread's busy time. The main thread marks a round published when this
// thread reports it sent (publisher.ts); a round it could not send is left to the sweeper.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Producer } from 'kafkajs';
import { createKafka, createProducer } from '../../src/kafka/client';
import { AvroCodec, createRegistry } from '../../src/kafka/registry';
import { TopicNames } from '../../src/kafka/topics';
import { log } from '../../src/log';
import { toTopicMessages, type OutboxMessage } from './outbox';

export interface PublisherThreadSettings {
  brokers: string[];
  registryUrl: string;
  topicPrefix: string;
}

export type ToPublisher =
  | { kind: 'round'; id: number; messages: OutboxMessage[] }
  | { kind: 'close' };

export type FromPublisher =
  | { kind: 'ready' }
  | { kind: 'failed'; reason: string }
  | { kind: 'sent'; id: number }
  | { kind: 'lost'; id: number; reason: string };

async function runPublisher(settings: PublisherThreadSettings): Promise<void> {
  const port = parentPort!;
  const names = new TopicNames(settings.topicPrefix);
  const codec = new AvroCodec(createRegistry(settings.registryUrl), names);
  let producer: Producer;
  try {
    await codec.registerAll();
    producer = await createProducer(createKafka(settings.brokers, `payments-${process.pid}-outbox`));
  } catch (error) {
    port.postMessage({ kind: 'failed', reason: (error as Error).message } satisfies FromPublisher);
    return;
  }

  const send = async ({ id, messages }: { id: number; messages: OutboxMessage[] }) => {
    try {
      const topicMessages = await toTopicMessages({ names, codec }, messages);
      if (topicMessages.length > 0) await producer.sendBatch({ topicMessages, acks: -1 });
      port.postMessage({ kind: 'sent', id } satisfies FromPublisher);
    } catch (error) {
      port.postMessage({ kind: 'lost', id, reason: (error as Error).message } satisfies FromPublisher);
    }
  };
  let chain = Promise.resolve();
  port.on('message', (message: ToPublisher) => {
    if (message.kind === 'round') {
      chain = chain.then(() => send(message));
      return;
    }
    chain = chain.then(async () => {
      await producer.disconnect().catch((error) => log.warn({ err: error }, 'outbox producer disconnect failed'));
      process.exit(0); // in a worker thread: ends this thread only
    });
  });
  port.postMessage({ kind: 'ready' } satisfies FromPublisher);
}

if (!isMainThread && (workerData as { outboxPublisher?: PublisherThreadSettings } | null)?.outboxPublisher) {
  void runPublisher((workerData as { outboxPublisher: PublisherThreadSettings }).outboxPublisher);
}
