// Reads an account's domain events back from account_events, where the ledger writes them with
// the money they announce (migrations/20261124130000_account_events_and_outbox_rounds.ts), by the
// account's event sequence number (account_seq: gapless, in commit order), so a reconnecting
// stream replays exactly what it missed.
import type { DomainEventEnvelope } from '../../ledger/messages';
import type { Db } from '../db';

export interface StoredEvent {
  /** The event's number in its account's sequence: the replay cursor. */
  seq: number;
  event: DomainEventEnvelope;
}

/** The sequence number of the account's event `eventId`, or null when the account has no such event. */
export async function findEventSeq(db: Db, accountId: string, eventId: string): Promise<number | null> {
  // Within the account's events (the primary key's prefix): a reconnecting client names a recent one.
  const row: { account_seq: string | null } | undefined = await db('account_events')
    .where({ account_id: accountId, id: eventId })
    .first('account_seq');
  return row?.account_seq ? Number(row.account_seq) : null;
}

/** The number of the account's latest committed event (0 before its first). */
export async function lastEventSeq(db: Db, accountId: string): Promise<number> {
  const row: { last_seq: string } | undefined = await db('account_event_sequences').where('account_id', accountId).first('last_seq');
  return row ? Number(row.last_seq) : 0;
}

/** The account's events numbered after `afterSeq`, in order, at most `limit` (served by the primary key). */
export async function eventsAfter(db: Db, accountId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
  const rows: Array<{ account_seq: string; payload: DomainEventEnvelope }> = await db('account_events')
    .where({ account_id: accountId })
    .where('account_seq', '>', afterSeq)
    .orderBy('account_seq')
    .limit(limit)
    .select('account_seq', 'payload');
  return rows.map((row) => ({ seq: Number(row.account_seq), event: { ...row.payload, account_seq: Number(row.account_seq) } }));
}

/**
 * The account's events numbered before `beforeSeq` (all, when null), newest first, at most
 * `limit`, of one type when `type` is given (served by the primary key).
 */
export async function eventsBefore(db: Db, accountId: string, beforeSeq: number | null, limit: number, type: string | null): Promise<StoredEvent[]> {
  const query = db('account_events').where({ account_id: accountId });
  if (beforeSeq !== null) query.where('account_seq', '<', beforeSeq);
  if (type !== null) query.whereRaw(`payload->>'type' = ?`, [type]);
  const rows: Array<{ account_seq: string; payload: DomainEventEnvelope }> = await query.orderBy('account_seq', 'desc').limit(limit).select('account_seq', 'payload');
  return rows.map((row) => ({ seq: Number(row.account_seq), event: { ...row.payload, account_seq: Number(row.account_seq) } }));
}
