// The consumer runner every consumer uses: batches are decoded, handed to the handler, and their
// offsets committed only after the handler succeeded. Transient failures (a dependency away,
// the schema registry included) are retried with a bounded, jittered backoff and never
// dead-lettered. A batch that fails for another reason is bisected, alone (never merged with
// other partitions' work), until the message that fails alone is found: a consumer whose messages
// have a client waiting (the ledger) refuses it with a final answer (refuseAlone); the others, and
// bytes that do not decode at all, go to the topic's dead-letter twin with the reason, recorded in
// Postgres for an operator (dead-letters.ts). A broken invariant is a bug, not bad input: it stops the process.
import type { Consumer, Kafka, KafkaMessage, Producer } from 'kafkajs';
import { log } from '../log';
import type { AvroCodec } from './registry';
import { deadLetterTopic, type TopicNames } from './topics';
import { isTransient } from '../transient';
import type { Db } from '../db';
import { recordDeadLetter } from './dead-letters';

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
  /**
   * Applies a whole batch; must be idempotent, since a batch can be delivered again. `isolating`
   * is true while a failed batch is bisected: apply these messages on their own, not merged
   * with other work, so another partition's poison message cannot fail them.
   */
  handleBatch(messages: Delivered<T>[], context: { isolating: boolean }): Promise<void>;
  /**
   * A message that fails on its own for a reason other than a dependency: decided with a final
   * refusal instead of the dead-letter topic, so the client waiting on it learns an outcome. When
   * this fails too (other than transiently), the message is dead-lettered.
   */
  refuseAlone?: (message: Delivered<T>, error: Error) => Promise<void>;
  /** Called with a broken invariant (an assertion failed); the default ends the process. */
  onBrokenInvariant?: (error: Error) => void;
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
  /**
   * A test on a message's headers before it is decoded: false skips the message unread (it is
   * for another process). Skipped messages are committed like handled ones.
   */
  accepts?: (headers: KafkaMessage['headers']) => boolean;
  /**
   * Offsets are committed at most this often (default 0: after every batch). Each commit is a
   * request the broker answers in turn; a handler that is idempotent anyway may commit less
   * often, and a crash then delivers up to this much again.
   */
  commitIntervalMs?: number;
}

export interface ConsumerDeps {
  /** Where dead letters are recorded for an operator (GET /v1/dead-letters); none: the topic alone. */
  db?: Db;
  kafka: Kafka;
  codec: AvroCodec;
  names: TopicNames;
  producer: Producer;
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

/** An assertion that can only fail through a bug (STYLE.md: a broken invariant is a crash). */
export function isBrokenInvariant(error: unknown): error is Error {
  return error instanceof Error && (error.name === 'AssertionError' || (error as { code?: unknown }).code === 'ERR_ASSERTION');
}

/**
 * Bytes no registry can make sense of: a wrong magic byte, a schema id the registry does not
 * know (404), Avro that does not decode. Anything else while decoding (the registry unreachable
 * or failing) may pass: it is retried, never dead-lettered.
 */
export function isUndecodable(error: unknown): boolean {
  if (error instanceof PoisonMessageError) return true;
  const { name, status } = (error ?? {}) as { name?: string; status?: number };
  if (name === 'ResponseError') return status === 404;
  return typeof name === 'string' && name.startsWith('ConfluentSchemaRegistry');
}

/** Ends the process after a broken invariant: its supervisor restarts it on a clean state. */
export function stopOnBrokenInvariant(error: Error): void {
  log.fatal({ err: error }, 'a ledger invariant is broken: stopping the process without committing');
  process.exit(70);
}

/** Decodes a message, retrying while the schema registry is unreachable or failing. */
async function decodeRetrying<T>(codec: AvroCodec, value: Buffer, attemptsMax: number, backoffMsInitial: number, backoffMsMax: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await codec.decode<T>(value);
    } catch (error) {
      if (isUndecodable(error) || attempt >= attemptsMax) throw error;
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

/**
 * The fetch of a fan-out reader of domain.events (the notifier, the webhook dispatcher): it waits
 * up to `waitMs` to gather 64 KiB of events, fewer and larger fetches under load (at 200
 * transfers/s, 0.8 ms less of the broker's CPU a transfer), at the price of up to `waitMs` per
 * event and of a fetch every `waitMs` while idle. 0: each event fetched as it comes, an idle fetch
 * waiting 500 ms (config.eventFetchWaitMs).
 */
export function fanOutFetch(waitMs: number): Pick<ConsumerSpec<unknown>, 'fetchMinBytes' | 'fetchMaxWaitMs'> {
  return waitMs === 0 ? { fetchMinBytes: 1, fetchMaxWaitMs: 500 } : { fetchMinBytes: 64 * 1024, fetchMaxWaitMs: waitMs };
}

export async function startConsumer<T>(deps: ConsumerDeps, spec: ConsumerSpec<T>): Promise<Consumer> {
  const attemptsMax = spec.attemptsMax ?? 5;
  const backoffMsInitial = spec.backoffMsInitial ?? 100;
  const backoffMsMax = spec.backoffMsMax ?? 5_000;
  const onBrokenInvariant = (error: Error): void => {
    (spec.onBrokenInvariant ?? stopOnBrokenInvariant)(error);
    throw error; // when the process goes on (a test's handler), nothing is committed
  };
  const topic = deps.names.full(spec.topic);
  const dlqTopic = deps.names.full(deadLetterTopic(spec.topic));

  const deadLetter = async (message: KafkaMessage, partition: number, reason: string) => {
    log.error({ topic, partition, offset: message.offset, reason }, 'poison message sent to the dead-letter topic');
    // Recorded first: a failure here is retried with the batch, and the record is kept once.
    if (deps.db) {
      await recordDeadLetter(deps.db, {
        consumerGroup: spec.groupId, topic, partition, offset: message.offset, key: message.key ?? null, value: message.value ?? null, reason,
      });
    }
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
    // Commits are made below, after the handler succeeded, as often as commitIntervalMs allows.
    autoCommit: false,
    autoCommitInterval: spec.commitIntervalMs ?? 0,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: spec.partitionsConsumedConcurrently ?? 1,
    eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, heartbeat, isRunning, isStale }) => {
      if (batch.messages.length === 0 || !isRunning() || isStale()) return;
      const decoded: Array<{ raw: KafkaMessage; delivered: Delivered<T> }> = [];
      for (const raw of batch.messages) {
        if (spec.accepts && !spec.accepts(raw.headers)) continue;
        try {
          if (!raw.value) throw new PoisonMessageError('message has no value');
          const value = await decodeRetrying<T>(deps.codec, raw.value, attemptsMax, backoffMsInitial, backoffMsMax);
          decoded.push({ raw, delivered: { key: raw.key?.toString() ?? null, value, partition: batch.partition, offset: raw.offset, timestamp: raw.timestamp } });
        } catch (error) {
          // A registry outage that outlived its retries: stop without committing, redelivered later.
          if (!isUndecodable(error)) throw error;
          await deadLetter(raw, batch.partition, `undecodable: ${(error as Error).message}`);
        }
      }
      const apply = (items: typeof decoded, isolating: boolean) =>
        withRetries(() => spec.handleBatch(items.map((d) => d.delivered), { isolating }), attemptsMax, backoffMsInitial, backoffMsMax);
      // Bisects a failed batch: each half alone, so one poison message among n costs about
      // 2·log2(n) rounds and takes no good message along.
      const isolate = async (items: typeof decoded): Promise<void> => {
        try {
          await apply(items, true);
        } catch (error) {
          if (isTransient(error)) throw error;
          if (isBrokenInvariant(error)) return onBrokenInvariant(error);
          if (items.length === 1) {
            if (spec.refuseAlone) {
              try {
                await withRetries(() => spec.refuseAlone!(items[0].delivered, error as Error), attemptsMax, backoffMsInitial, backoffMsMax);
                return;
              } catch (refusalError) {
                if (isTransient(refusalError)) throw refusalError;
                log.error({ err: refusalError, topic, partition: batch.partition, offset: items[0].raw.offset }, 'a message could not be refused either');
              }
            }
            await deadLetter(items[0].raw, batch.partition, `handler failed: ${(error as Error).message}`);
            return;
          }
          const half = Math.ceil(items.length / 2);
          await isolate(items.slice(0, half));
          await heartbeat();
          await isolate(items.slice(half));
        }
      };
      try {
        if (decoded.length > 0) await apply(decoded, false);
      } catch (error) {
        // A transient failure that outlived its retries stops here without committing: the
        // batch is delivered again after the consumer restarts.
        if (isTransient(error)) throw error;
        if (isBrokenInvariant(error)) return onBrokenInvariant(error);
        await isolate(decoded);
      }
      resolveOffset(batch.lastOffset());
      await commitOffsetsIfNecessary();
      await heartbeat();
    },
  });
  return consumer;
}
