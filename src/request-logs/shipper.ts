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
import { SHIPPER_ROLE, type FromShipper, type ToShipper } from './messages';
import { wallNowMs } from '../clock';

runKafkaThread<ToShipper>(SHIPPER_ROLE, async ({ kafka, names, codec, producer, report }) => {
  const topic = names.full(TOPICS.requestLogs);
  const admin = kafka.admin();
  await admin.connect();
  const partitions = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.length;
  await admin.disconnect();
  await codec.registerAll(readSchemaFiles().filter((file) => file.topic === TOPICS.requestLogs));

  let batches = 0;
  const send = async (messages: EncodedLog[]): Promise<void> => {
    const partition = batches++ % partitions;
    await producer.send({ topic, acks: -1, messages: messages.map(({ value }) => ({ partition, value })) });
  };
  return async (message) => {
    if (message.kind === 'flush') {
      report({ kind: 'flushed', id: message.id } satisfies FromShipper);
      return;
    }
    const { id, records } = message;
    try {
      const encoded = await Promise.all(records.map(async (record) => ({ value: await codec.encode(TOPICS.requestLogs, record) })));
      for (const chunk of chunksBySize(encoded, CHUNK_BYTES_MAX)) await sendSplitting(chunk, (part) => retrying(() => send(part)));
      report({ kind: 'sent', id } satisfies FromShipper);
    } catch (error) {
      report({ kind: 'lost', id, reason: (error as Error).message } satisfies FromShipper);
    }
  };
});

interface EncodedLog { value: Buffer }

/**
 * The broker refuses a record batch over its `message.max.bytes` (1 MB by default), and a batch
 * of logs goes to one partition as one record batch: send it in chunks well under that bound.
 * One log is at most about 600 KB (body-text.ts), so every chunk fits.
 */
const CHUNK_BYTES_MAX = 512 * 1024;

export function chunksBySize(logs: EncodedLog[], bytesMax: number): EncodedLog[][] {
  const chunks: EncodedLog[][] = [];
  let current: EncodedLog[] = [];
  let size = 0;
  for (const entry of logs) {
    if (current.length > 0 && size + entry.value.length > bytesMax) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(entry);
    size += entry.value.length;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

const isTooLarge = (error: unknown): boolean => /MESSAGE_TOO_LARGE|RECORD_LIST_TOO_LARGE|too large/i.test(`${(error as { type?: string }).type ?? ''} ${(error as Error).message}`);

/** A chunk the broker still finds too large (a smaller broker limit) is halved, not dropped. */
async function sendSplitting(logs: EncodedLog[], send: (logs: EncodedLog[]) => Promise<void>): Promise<void> {
  try {
    await send(logs);
  } catch (error) {
    if (!isTooLarge(error) || logs.length === 1) throw error;
    const half = Math.ceil(logs.length / 2);
    await sendSplitting(logs.slice(0, half), send);
    await sendSplitting(logs.slice(half), send);
  }
}

/**
 * Kafka restarting should not cost logs: a send that fails for another reason than size is tried
 * again with backoff for up to SEND_RETRY_MS_MAX. The recorder's backlog bounds what waits meanwhile.
 */
const SEND_RETRY_MS_MAX = 60_000;

async function retrying(send: () => Promise<void>): Promise<void> {
  const deadline = wallNowMs() + SEND_RETRY_MS_MAX;
  for (let delayMs = 200; ; delayMs = Math.min(delayMs * 2, 5_000)) {
    try {
      return await send();
    } catch (error) {
      if (isTooLarge(error) || wallNowMs() + delayMs > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}
