// The request-log shipper: a worker thread that Avro-encodes request logs and produces them to
// request.logs. Encoding and producing cost about a fifth of an API process's CPU; on their
// own thread they run beside the request path, on another core, instead of inside it.
//
// The API thread posts batches (RequestLogRecorder); the shipper sends them in order, each
// batch whole to the next partition in turn, and answers `flushed` once everything posted
// before a flush request has been sent (or counted as lost).
import { readSchemaFiles } from '../kafka/registry';
import { runKafkaThread } from '../kafka/thread';
import { TOPICS } from '../kafka/topics';
import type { RequestLogRecord } from './recorder';

export const SHIPPER_ROLE = 'request-logs';

export type ToShipper =
  | { kind: 'batch'; records: RequestLogRecord[] }
  | { kind: 'flush'; id: number }
  | { kind: 'close' };

export type FromShipper =
  | { kind: 'flushed'; id: number }
  | { kind: 'sent'; count: number }
  | { kind: 'lost'; count: number; reason: string };

runKafkaThread<ToShipper>(SHIPPER_ROLE, async ({ kafka, names, codec, producer, report }) => {
  const topic = names.full(TOPICS.requestLogs);
  const admin = kafka.admin();
  await admin.connect();
  const partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.length;
  await admin.disconnect();
  await codec.registerAll(readSchemaFiles().filter((file) => file.topic === TOPICS.requestLogs));

  let batches = 0;
  return async (message) => {
    if (message.kind === 'flush') {
      report({ kind: 'flushed', id: message.id } satisfies FromShipper);
      return;
    }
    const { records } = message;
    try {
      const partition = batches++ % partitions;
      const messages = await Promise.all(records.map(async (record) => ({ partition, value: await codec.encode(TOPICS.requestLogs, record) })));
      await producer.send({ topic, acks: -1, messages });
      report({ kind: 'sent', count: records.length } satisfies FromShipper);
    } catch (error) {
      report({ kind: 'lost', count: records.length, reason: (error as Error).message } satisfies FromShipper);
    }
  };
});
