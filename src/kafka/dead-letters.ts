// The dead letters an operator works: every message a consumer set aside, kept in Postgres beside
// its copy on the topic's dead-letter twin, listed and replayed by the master key
// (src/operations/dead-letter-routes.ts). A replay sends the message, as it was, to the topic it came from.
import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import type { Db } from '../db';
import { keysetPage, type Page, type PageRequest } from '../db/keyset-pages';
import { DomainError } from '../domain-error';

export interface DeadLetterRow {
  id: string; consumer_group: string; source_topic: string; source_partition: number; source_offset: string;
  message_key: Buffer | null; message_value: Buffer | null; reason: string; created_at: Date; replayed_at: Date | null;
}

export interface DeadLetter {
  consumerGroup: string; topic: string; partition: number; offset: string; key: Buffer | null; value: Buffer | null; reason: string;
}

/** Records a dead letter once (a redelivered batch finds it recorded); its id. */
export async function recordDeadLetter(db: Db, letter: DeadLetter): Promise<void> {
  await db('dead_letters').insert({
    id: randomUUID(), consumer_group: letter.consumerGroup, source_topic: letter.topic, source_partition: letter.partition,
    source_offset: letter.offset, message_key: letter.key, message_value: letter.value, reason: letter.reason.slice(0, 2_000),
  }).onConflict(['consumer_group', 'source_topic', 'source_partition', 'source_offset']).ignore();
}

export class DeadLetters {
  constructor(private readonly db: Db, private readonly producer: Producer) {}

  page<Item>(filter: { topic?: string; replayed?: boolean }, page: PageRequest, view: (row: DeadLetterRow) => Item): Promise<Page<Item>> {
    const query = this.db('dead_letters').select('*');
    if (filter.topic !== undefined) query.where('source_topic', filter.topic);
    if (filter.replayed !== undefined) query.where((q) => (filter.replayed ? q.whereNotNull('replayed_at') : q.whereNull('replayed_at')));
    return keysetPage(query, 'dead_letters', page, view);
  }

  /** How many dead letters wait for an operator (not replayed), by source topic. */
  async waiting(): Promise<Record<string, number>> {
    const rows: Array<{ source_topic: string; count: string }> = await this.db('dead_letters').whereNull('replayed_at')
      .groupBy('source_topic').select('source_topic').count({ count: '*' });
    return Object.fromEntries(rows.map((r) => [r.source_topic, Number(r.count)]));
  }

  async byId(id: string): Promise<DeadLetterRow> {
    const row: DeadLetterRow | undefined = await this.db('dead_letters').where('id', id).first();
    if (!row) throw new DomainError('resource_not_found', 'no such dead letter', id);
    return row;
  }

  /**
   * Sends the message again, as it was, to the topic it came from, and marks it replayed. The
   * consumers are idempotent, so a replay of a message that meanwhile got through changes nothing.
   */
  async replay(id: string): Promise<DeadLetterRow> {
    const row = await this.byId(id);
    if (row.message_value === null) throw new DomainError('invalid_request', 'this dead letter has no value to send again', id);
    await this.producer.send({ topic: row.source_topic, acks: -1, messages: [{ key: row.message_key, value: row.message_value }] });
    const [updated]: DeadLetterRow[] = await this.db('dead_letters').where('id', id).update({ replayed_at: this.db.fn.now() }).returning('*');
    return updated;
  }
}
