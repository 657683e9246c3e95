// Sends messages in produce requests small enough for the broker. Kafka refuses a request that
// carries a batch for one partition larger than its message.max.bytes (1 MiB by default) with
// MESSAGE_TOO_LARGE, and then stores none of it: a ledger round of 2,000 transfers encodes to
// about 5.6 MB, and a round sent in one request was never published, by its writer or by the
// sweeper. Requests here hold at most REQUEST_BYTES_MAX in all, so every partition's batch in
// one is smaller still. They go one after another on a producer with one request in flight, so
// each partition keeps its order; if one fails, the ones before it are stored, and a retry
// sends them again (readers drop duplicates by id).
import type { Message, Producer, TopicMessages } from 'kafkajs';

export const REQUEST_BYTES_MAX = 512 * 1024;
/** What a record costs beyond its key and value (lengths, offsets, timestamps), roughly. */
const RECORD_OVERHEAD_BYTES = 32;

const length = (data: Buffer | string | null | undefined) => (data == null ? 0 : Buffer.byteLength(data));

function recordBytes(message: Message): number {
  let bytes = RECORD_OVERHEAD_BYTES + length(message.key) + length(message.value as Buffer | string | null);
  for (const [name, value] of Object.entries(message.headers ?? {})) bytes += length(name) + length(value as Buffer | string | undefined);
  return bytes;
}

/** Sends `topicMessages` (acks from all in-sync replicas) in as few requests of at most `bytesMax` as it can. */
export async function sendBatches(producer: Producer, topicMessages: TopicMessages[], bytesMax = REQUEST_BYTES_MAX): Promise<void> {
  let request = new Map<string, Message[]>();
  let bytes = 0;
  const send = async () => {
    if (request.size === 0) return;
    await producer.sendBatch({ topicMessages: [...request].map(([topic, messages]) => ({ topic, messages })), acks: -1 });
    request = new Map();
    bytes = 0;
  };
  for (const { topic, messages } of topicMessages) {
    for (const message of messages) {
      const size = recordBytes(message);
      if (bytes > 0 && bytes + size > bytesMax) await send();
      const list = request.get(topic) ?? [];
      list.push(message);
      request.set(topic, list);
      bytes += size;
    }
  }
  await send();
}
