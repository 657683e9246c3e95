// The consumer runner every consumer uses: batches are decoded, handed to the handler, and their
// offsets committed only after the handler succeeded. Transient failures are retried with a
// bounded, jittered backoff; a message that fails for another reason (a poison message) is set
// aside in the topic's dead-letter twin with the reason, and the consumer goes on.
import type { Consumer, Kafka, KafkaMessage, Producer } from 'kafkajs';
import { log } from '../log';
import type { AvroCodec } from './registry';
import { deadLetterTopic, type TopicNames } from './topics';

export interface Delivered<T> {
  key: string | null;
  value: T;
  partition: number;
  offset: string;
  timestamp: string;
}

export interface ConsumerSpec<T> {
  groupId: string;
  /** Topic base name (without the prefix). */
  topic: string;
  /** Applies a whole batch; must be idempotent, since a batch can be delivered again. */
  handleBatch(messages: Delivered<T>[]): Promise<void>;
  attemptsMax?: number;
  backoffMsInitial?: number;
  backoffMsMax?: number;
  partitionsConsumedConcurrently?: number;
  fromBeginning?: boolean;
  maxBytesPerPartition?: number;
  /** A fetch waits for this much data or `fetchMaxWaitMs`; default 1 byte: it returns with any data. */
  fetchMinBytes?: number;
  /** How long a fetch waits for `fetchMinBytes` (default 500 ms, which bounds only idle polling). */
  fetchMaxWaitMs?: number;
  /** How long the group waits for a silent member before moving its partitions (default 10 s). */
  sessionTimeoutMs?: number;
  /** Called each time this member has joined its group and holds its partitions. */
  onGroupJoin?: () => void;
}

export interface ConsumerDeps {
  kafka: Kafka;
  codec: AvroCodec;
  names: TopicNames;
  producer: Producer;
}

const TRANSIENT_ERROR_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN',
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57P01', '57P02', '57P03', // admin shutdown, crash shutdown, cannot connect now
  '53300', // too_many_connections
]);

/** Errors that may go away on their own (a dependency restarting, a lock conflict). */
export function isTransient(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, retriable } = error as { code?: unknown; retriable?: unknown };
  if (retriable === true) return true;
  if (typeof code === 'string' && (TRANSIENT_ERROR_CODES.has(code) || code.startsWith('08'))) return true;
  const message = (error as Error).message ?? '';
  return /Knex: Timeout acquiring a connection|Connection terminated|connect ECONNREFUSED/.test(message);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work`, retrying transient failures at most `attemptsMax` times in all. */
export async function withRetries<R>(work: () => Promise<R>, attemptsMax: number, backoffMsInitial: number, backoffMsMax: number): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isTransient(error) || attempt >= attemptsMax) throw error;
      const ceiling = Math.min(backoffMsMax, backoffMsInitial * 2 ** (attempt - 1));
      await sleep(ceiling / 2 + Math.random() * (ceiling / 2));
    }
  }
}

export class PoisonMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonMessageError';
  }
}

export async function startConsumer<T>(deps: ConsumerDeps, spec: ConsumerSpec<T>): Promise<Consumer> {
  const attemptsMax = spec.attemptsMax ?? 5;
  const backoffMsInitial = spec.backoffMsInitial ?? 100;
  const backoffMsMax = spec.backoffMsMax ?? 5_000;
  const topic = deps.names.full(spec.topic);
  const dlqTopic = deps.names.full(deadLetterTopic(spec.topic));

  const deadLetter = async (message: KafkaMessage, partition: number, reason: string) => {
    log.error({ topic, partition, offset: message.offset, reason }, 'poison message sent to the dead-letter topic');
    await deps.producer.send({
      topic: dlqTopic,
      acks: -1,
      messages: [{
        key: message.key,
        value: message.value,
        headers: {
          'dlq-reason': reason.slice(0, 1000),
          'dlq-source-topic': topic,
          'dlq-source-partition': String(partition),
          'dlq-source-offset': message.offset,
          'dlq-consumer-group': spec.groupId,
        },
      }],
    });
  };

  const consumer = deps.kafka.consumer({
    groupId: spec.groupId,
    maxWaitTimeInMs: spec.fetchMaxWaitMs ?? 500,
    minBytes: spec.fetchMinBytes ?? 1,
    maxBytesPerPartition: spec.maxBytesPerPartition ?? 1024 * 1024,
    allowAutoTopicCreation: false,
    // A member that died (SIGKILL) holds its partitions until the session times out: keep that
    // short so the group moves its work to the survivors within seconds.
    sessionTimeout: spec.sessionTimeoutMs ?? 10_000,
    heartbeatInterval: 1_000,
  });
  if (spec.onGroupJoin) consumer.on(consumer.events.GROUP_JOIN, spec.onGroupJoin);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: spec.fromBeginning ?? true });
  await consumer.run({
    autoCommit: true,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: spec.partitionsConsumedConcurrently ?? 1,
    eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, heartbeat, isRunning, isStale }) => {
      if (batch.messages.length === 0 || !isRunning() || isStale()) return;
      const decoded: Array<{ raw: KafkaMessage; delivered: Delivered<T> }> = [];
      for (const raw of batch.messages) {
        try {
          if (!raw.value) throw new PoisonMessageError('message has no value');
          const value = await deps.codec.decode<T>(raw.value);
          decoded.push({ raw, delivered: { key: raw.key?.toString() ?? null, value, partition: batch.partition, offset: raw.offset, timestamp: raw.timestamp } });
        } catch (error) {
          await deadLetter(raw, batch.partition, `undecodable: ${(error as Error).message}`);
        }
      }
      const apply = (items: typeof decoded) => withRetries(() => spec.handleBatch(items.map((d) => d.delivered)), attemptsMax, backoffMsInitial, backoffMsMax);
      try {
        if (decoded.length > 0) await apply(decoded);
      } catch (error) {
        // A transient failure that outlived its retries stops here without committing: the
        // batch is delivered again after the consumer restarts. Anything else: isolate the
        // poison message(s) one by one so the good ones still apply.
        if (isTransient(error)) throw error;
        for (const item of decoded) {
          try {
            await apply([item]);
          } catch (single) {
            if (isTransient(single)) throw single;
            await deadLetter(item.raw, batch.partition, `handler failed: ${(single as Error).message}`);
          }
          await heartbeat();
        }
      }
      resolveOffset(batch.lastOffset());
      await commitOffsetsIfNecessary();
      await heartbeat();
    },
  });
  return consumer;
}
