// Threads that produce to Kafka beside the main thread (the request-log shipper, the ledger's
// outbox publisher). Each has its own producer and codec, handles its messages one after another
// in the order they were posted, and ends on { kind: 'close' } once what was posted before is
// handled. Main side: startKafkaThread. Thread side: runKafkaThread.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { Kafka, Producer } from 'kafkajs';
import type { Config } from '../config';
import { log } from '../log';
import { createKafka, createProducer } from './client';
import { AvroCodec, createRegistry } from './registry';
import { TopicNames } from './topics';

export interface KafkaThreadSettings {
  brokers: string[];
  registryUrl: string;
  topicPrefix: string;
}

export const kafkaThreadSettings = (config: Config): KafkaThreadSettings => ({
  brokers: config.kafkaBrokers, registryUrl: config.schemaRegistryUrl, topicPrefix: config.kafkaTopicPrefix,
});

/** What a thread reports while it starts. */
type Startup = { kind: 'ready' } | { kind: 'failed'; reason: string };

/** Starts `file` as the Kafka thread `role`; resolves once it can work. */
export async function startKafkaThread(file: string, role: string, settings: KafkaThreadSettings): Promise<Worker> {
  const worker = new Worker(file, { workerData: { kafkaThread: { role, settings } } });
  await new Promise<void>((resolve, reject) => {
    // A thread that ends before it says ready (killed, out of memory) fails the start, never hangs it.
    const onExit = (code: number) => reject(new Error(`the ${role} thread exited (code ${code}) before it was ready`));
    const onMessage = (message: Startup) => {
      if (message.kind === 'ready') resolve();
      else if (message.kind === 'failed') reject(new Error(`the ${role} thread could not start: ${message.reason}`));
      else return;
      worker.off('message', onMessage);
      worker.off('error', reject);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', reject);
    worker.on('exit', onExit);
  });
  return worker;
}

export interface KafkaThreadContext {
  kafka: Kafka;
  names: TopicNames;
  codec: AvroCodec;
  producer: Producer;
  /** Posts a report to the main thread. */
  report(message: unknown): void;
}

/**
 * In the thread started as `role`, connects a producer, runs `prepare` (schemas, metadata) and
 * then hands every posted message except close to the handler it returned. Elsewhere does nothing.
 */
export function runKafkaThread<M extends { kind: string }>(
  role: string, prepare: (context: KafkaThreadContext) => Promise<(message: Exclude<M, { kind: 'close' }>) => Promise<void> | void>,
): void {
  const started = isMainThread ? null : (workerData as { kafkaThread?: { role: string; settings: KafkaThreadSettings } } | null)?.kafkaThread;
  if (started?.role !== role) return;
  void serve(role, started.settings, prepare);
}

async function serve<M extends { kind: string }>(
  role: string, settings: KafkaThreadSettings, prepare: (context: KafkaThreadContext) => Promise<(message: Exclude<M, { kind: 'close' }>) => Promise<void> | void>,
): Promise<void> {
  const port = parentPort!;
  const names = new TopicNames(settings.topicPrefix);
  const kafka = createKafka(settings.brokers, `payments-${process.pid}-${role}`);
  let producer: Producer;
  let handle: (message: Exclude<M, { kind: 'close' }>) => Promise<void> | void;
  try {
    producer = await createProducer(kafka);
    const codec = new AvroCodec(createRegistry(settings.registryUrl), names);
    handle = await prepare({ kafka, names, codec, producer, report: (message) => port.postMessage(message) });
  } catch (error) {
    port.postMessage({ kind: 'failed', reason: (error as Error).message } satisfies Startup);
    return;
  }
  let chain = Promise.resolve();
  port.on('message', (message: M) => {
    if (message.kind !== 'close') {
      chain = chain.then(() => handle(message as Exclude<M, { kind: 'close' }>))
        .catch((error) => log.error({ err: error, role }, 'a Kafka thread failed to handle a message'));
      return;
    }
    chain = chain.then(async () => {
      await producer.disconnect().catch((error) => log.warn({ err: error, role }, 'Kafka thread producer disconnect failed'));
      process.exit(0); // in a worker thread: ends this thread only
    });
  });
  port.postMessage({ kind: 'ready' } satisfies Startup);
}
