// Turns a decision's events, entries and partner instructions into outbox rows, and encodes
// them for Kafka (publisher-thread.ts sends them once the transaction that wrote them committed).
import { randomUUID } from 'node:crypto';
import type { Message, TopicMessages } from 'kafkajs';
import type { EventDraft } from '../../ledger/decide';
import { partnerEnvelope, type DomainEventEnvelope, type PartnerInstruction } from '../../ledger/messages';
import type { EntryWrite, OutboxWrite } from '../../ledger/ports';
import type { AvroCodec } from '../../src/kafka/registry';
import { domainEventHeaders, TOPICS, type TopicNames } from '../../src/kafka/topics';

export function eventRow(event: EventDraft, environment: string, now: Date): OutboxWrite {
  const envelope: DomainEventEnvelope = {
    id: randomUUID(), type: event.type, created_at: now.toISOString(), environment,
    resource_type: event.resourceType, resource_id: event.resourceId, account_id: event.accountId,
    account_seq: 0, // numbered when the round is written (ledger/store/round-write.ts)
    data: {
      id: event.resourceId, status: event.status, amount: event.amount, currency: event.currency,
      attributes: event.attributes ? JSON.stringify(event.attributes) : null, metadata: event.metadata ?? null,
    },
  };
  return { id: envelope.id, topic: TOPICS.domainEvents, key: event.resourceId, accountId: event.accountId, payload: envelope, headers: domainEventHeaders(event.accountId) };
}

export function entryRow(entry: EntryWrite, now: Date): OutboxWrite {
  return {
    id: entry.id, topic: TOPICS.ledgerEntries, key: entry.id, accountId: null,
    payload: {
      id: entry.id, kind: entry.kind, command_id: entry.commandId, transfer_id: entry.transferId, created_at: now.toISOString(),
      postings: entry.postings.map((p) => ({
        ledger_account_id: p.ledgerAccountId, ledger_account_code: p.ref.code, account_id: p.ref.accountId,
        currency: p.ref.currency, amount: p.amount.toFixed(),
      })),
    },
  };
}

export function partnerCommandRow(partner: string, accountId: string, instruction: PartnerInstruction, now: Date): OutboxWrite {
  const envelope = partnerEnvelope(partner, accountId, instruction, now);
  return { id: randomUUID(), topic: TOPICS.partnerCommands, key: envelope.resource_id, accountId: null, payload: envelope };
}

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
