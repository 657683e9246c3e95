// Outbox messages the sweeper set aside because Kafka can never take them as they are
// (src/kafka/permanent.ts): kept in Postgres, counted and listed for an operator by the master
// key (src/operations/outbox-routes.ts), and replayed after a fix: a replay encodes the stored payload
// with the schemas of the running version and sends it to its topic. Readers take a message once
// by its id, so a replay of one that meanwhile got through changes nothing.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Producer } from 'kafkajs';
import type { Db } from '../db';
import { keysetPage, type Page, type PageRequest } from '../db/keyset-pages';
import { DomainError } from '../domain-error';
import { permanentEncodingFailure, permanentSendFailure } from '../kafka/permanent';
import type { AvroCodec } from '../kafka/registry';
import type { TopicNames } from '../kafka/topics';

export interface SetAsideRow {
  id: string; round_id: string; topic: string; message_key: string; payload: unknown; headers: Record<string, string> | null;
  reason: string; created_at: Date; replayed_at: Date | null;
}

export interface SetAsideMessage { topic: string; key: string; payload: unknown; headers?: Record<string, string>; reason: string }

/** Sets `messages` of round `roundId` aside, in the caller's transaction. */
export async function setAsideMessages(trx: Knex | Knex.Transaction, roundId: string, messages: SetAsideMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await trx('outbox_set_aside').insert(messages.map((m) => ({
    id: randomUUID(), round_id: roundId, topic: m.topic, message_key: m.key, payload: JSON.stringify(m.payload),
    headers: m.headers ? JSON.stringify(m.headers) : null, reason: m.reason.slice(0, 2_000),
  })));
}

export class OutboxSetAside {
  constructor(private readonly db: Db, private readonly kafka: { producer: Producer; codec: AvroCodec; names: TopicNames }) {}

  page<Item>(filter: { topic?: string; replayed?: boolean }, page: PageRequest, view: (row: SetAsideRow) => Item): Promise<Page<Item>> {
    const query = this.db('outbox_set_aside').select('*');
    if (filter.topic !== undefined) query.where('topic', filter.topic);
    if (filter.replayed !== undefined) query.where((q) => (filter.replayed ? q.whereNotNull('replayed_at') : q.whereNull('replayed_at')));
    return keysetPage(query, 'outbox_set_aside', page, view);
  }

  /** How many set-aside messages wait for an operator (not replayed), by topic. */
  async waiting(): Promise<Record<string, number>> {
    const rows: Array<{ topic: string; count: string }> = await this.db('outbox_set_aside').whereNull('replayed_at')
      .groupBy('topic').select('topic').count({ count: '*' });
    return Object.fromEntries(rows.map((r) => [r.topic, Number(r.count)]));
  }

  async byId(id: string): Promise<SetAsideRow> {
    const row: SetAsideRow | undefined = await this.db('outbox_set_aside').where('id', id).first();
    if (!row) throw new DomainError('resource_not_found', 'no such set-aside outbox message', id);
    return row;
  }

  /** Encodes and sends the message again; a message still refused is answered 422 and stays waiting. */
  async replay(id: string): Promise<SetAsideRow> {
    const row = await this.byId(id);
    let value: Buffer;
    try {
      value = await this.kafka.codec.encode(row.topic, row.payload);
    } catch (error) {
      const reason = permanentEncodingFailure(error);
      if (reason) throw new DomainError('message_unsendable', `the message still cannot be sent: ${reason}`.slice(0, 2_000), 'payload');
      throw error;
    }
    try {
      await this.kafka.producer.send({
        topic: this.kafka.names.full(row.topic), acks: -1, messages: [{ key: row.message_key, value, headers: row.headers ?? undefined }],
      });
    } catch (error) {
      const reason = permanentSendFailure(error);
      if (reason) throw new DomainError('message_unsendable', `the message still cannot be sent: ${reason}`.slice(0, 2_000), 'payload');
      throw error;
    }
    const [updated]: SetAsideRow[] = await this.db('outbox_set_aside').where('id', id).update({ replayed_at: this.db.fn.now() }).returning('*');
    return updated;
  }
}
