// The request-log shipper: a worker thread that Avro-encodes request logs and produces them to
// request.logs. Encoding and producing cost about a fifth of an API process's CPU; on their
// own thread they run beside the request path, on another core, instead of inside it.
//
// The API thread posts batches (RequestLogRecorder); the shipper sends them in order, each
// batch whole to the next partition in turn, and answers `flushed` once everything posted
// before a flush request has been sent (or counted as lost).
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Producer } from 'kafkajs';
import { createKafka, createProducer } from '../kafka/client';
import { AvroCodec, createRegistry, readSchemaFiles } from '../kafka/registry';
import { TOPICS, TopicNames } from '../kafka/topics';
import { log } from '../log';
import type { RequestLogRecord } from './recorder';

export interface ShipperSettings {
  brokers: string[];
  registryUrl: string;
  topicPrefix: string;
}

export type ToShipper =
  | { kind: 'batch'; records: RequestLogRecord[] }
  | { kind: 'flush'; id: number }
  | { kind: 'close' };

export type FromShipper =
  | { kind: 'ready' }
  | { kind: 'flushed'; id: number }
  | { kind: 'sent'; count: number }
  | { kind: 'lost'; count: number; reason: string }
  | { kind: 'failed'; reason: string };

async function runShipper(settings: ShipperSettings): Promise<void> {
  const port = parentPort!;
  const names = new TopicNames(settings.topicPrefix);
  const topic = names.full(TOPICS.requestLogs);
  const kafka = createKafka(settings.brokers, `payments-${process.pid}-request-logs`);
  const admin = kafka.admin();
  let producer: Producer;
  let partitions: number;
  const codec = new AvroCodec(createRegistry(settings.registryUrl), names);
  try {
    await admin.connect();
    partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.length;
    await admin.disconnect();
    await codec.registerAll(readSchemaFiles().filter((file) => file.topic === TOPICS.requestLogs));
    producer = await createProducer(kafka);
  } catch (error) {
    port.postMessage({ kind: 'failed', reason: (error as Error).message } satisfies FromShipper);
    return;
  }

  let batches = 0;
  let chain = Promise.resolve();
  const send = async (records: RequestLogRecord[]) => {
    try {
      const partition = batches++ % partitions;
      const messages = await Promise.all(records.map(async (record) => ({ partition, value: await codec.encode(TOPICS.requestLogs, record) })));
      await producer.send({ topic, acks: -1, messages });
      port.postMessage({ kind: 'sent', count: records.length } satisfies FromShipper);
    } catch (error) {
      port.postMessage({ kind: 'lost', count: records.length, reason: (error as Error).message } satisfies FromShipper);
    }
  };
  port.on('message', (message: ToShipper) => {
    if (message.kind === 'batch') chain = chain.then(() => send(message.records));
    else if (message.kind === 'flush') chain = chain.then(() => port.postMessage({ kind: 'flushed', id: message.id } satisfies FromShipper));
    else {
      chain = chain.then(async () => {
        await producer.disconnect().catch((error) => log.warn({ err: error }, 'request-log producer disconnect failed'));
        process.exit(0); // in a worker thread: ends this thread only
      });
    }
  });
  port.postMessage({ kind: 'ready' } satisfies FromShipper);
}

if (!isMainThread && (workerData as { requestLogShipper?: ShipperSettings } | null)?.requestLogShipper) {
  void runShipper((workerData as { requestLogShipper: ShipperSettings }).requestLogShipper);
}
