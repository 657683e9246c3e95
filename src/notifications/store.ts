// Reads an account's domain events back from the outbox, where they stay after publication
// (migrations/20261122110000_ledger.ts), so a reconnecting stream replays what it missed.
import type { DomainEventEnvelope } from '../../ledger/messages';
import type { Db } from '../db';

export interface StoredEvent {
  /** Outbox sequence number (BIGINT as text): the replay cursor. */
  seq: string;
  event: DomainEventEnvelope;
}

/** The outbox position of the account's event `eventId`, or null when the account has no such event. */
export async function findEventSeq(db: Db, accountId: string, eventId: string): Promise<string | null> {
  const row: { seq: string } | undefined = await db('outbox')
    .where({ id: eventId, topic: 'domain.events', account_id: accountId })
    .first('seq');
  return row?.seq ?? null;
}

/** The account's events after position `afterSeq`, oldest first, at most `limit` (served by outbox_account_events). */
export async function eventsAfter(db: Db, accountId: string, afterSeq: string, limit: number): Promise<StoredEvent[]> {
  const rows: Array<{ seq: string; payload: DomainEventEnvelope }> = await db('outbox')
    .where({ topic: 'domain.events', account_id: accountId })
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .select('seq', 'payload');
  return rows.map((row) => ({ seq: row.seq, event: row.payload }));
}
