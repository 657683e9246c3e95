// Outbox messages as Kafka records: each encoded by its topic's schema, grouped by topic for
// sendBatches (the ledger's publisher thread and the sweeper send them).
import type { Message, TopicMessages } from 'kafkajs';
import type { AvroCodec } from '../kafka/registry';
import type { TopicNames } from '../kafka/topics';

/** A message the ledger sends: a topic's base name, the message key, the payload to encode, and Kafka headers. */
export interface OutboxMessage { topic: string; key: string; payload: unknown; headers?: Record<string, string> }

/** Encodes messages for Kafka, grouped by topic, for sendBatches. */
export async function toTopicMessages(kafka: { names: TopicNames; codec: AvroCodec }, rows: OutboxMessage[]): Promise<TopicMessages[]> {
  const encoded: EncodedMessage[] = [];
  for (const row of rows) encoded.push(await encodeMessage(kafka, row));
  return byTopic(encoded);
}

/** A message and its Kafka record, its topic's full name. */
export interface EncodedMessage { message: OutboxMessage; topic: string; record: Message }

export async function encodeMessage(kafka: { names: TopicNames; codec: AvroCodec }, row: OutboxMessage): Promise<EncodedMessage> {
  return { message: row, topic: kafka.names.full(row.topic), record: { key: row.key, value: await kafka.codec.encode(row.topic, row.payload), headers: row.headers } };
}

/** Groups records by topic, each topic's in their order. */
export function byTopic(encoded: EncodedMessage[]): TopicMessages[] {
  const topics = new Map<string, Message[]>();
  for (const { topic, record } of encoded) {
    const list = topics.get(topic) ?? [];
    list.push(record);
    topics.set(topic, list);
  }
  return [...topics].map(([topic, messages]) => ({ topic, messages }));
}
