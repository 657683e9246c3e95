// The sweeper's claims on outbox rounds left unpublished (sweeper.ts): a round claimed by a lease,
// read back with its account events, and released when its send failed.
import type { Knex } from 'knex';
import type { DomainEventEnvelope } from '../../ledger/messages';

export interface UnpublishedRound {
  roundId: string;
  /** The messages no other table keeps (entries, partner instructions, operator events), in order. */
  messages: Array<{ topic: string; key: string; payload: unknown }>;
  /** The round's account events, in order. */
  events: DomainEventEnvelope[];
}

/**
 * Claims the oldest round a crashed (or slow) process left unpublished for longer than `ageMs`
 * and no sweeper is sending now, for `leaseMs`; its account events are read back from
 * account_events. Null when there is none. The claim is a lease written in a statement of its own
 * and committed at once: no lock is held while the round goes to Kafka, so a ledger round that
 * removes the round's mark meanwhile (the writer's publisher had it acknowledged) never waits on
 * the send. A claim whose sweeper died lapses with its lease.
 */
export async function claimUnpublishedRound(db: Knex, ageMs: number, leaseMs: number): Promise<UnpublishedRound | null> {
  // SKIP LOCKED: a round a ledger transaction is removing, or another sweeper claiming, is passed over.
  const { rows: rounds } = await db.raw(
    `UPDATE outbox_rounds SET claimed_until = now() + make_interval(secs => ?)
      WHERE round_id = (
        SELECT round_id FROM outbox_rounds
         WHERE created_at < now() - make_interval(secs => ?) AND (claimed_until IS NULL OR claimed_until < now())
         ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING round_id, messages, events`,
    [leaseMs / 1000, ageMs / 1000],
  );
  if (rounds.length === 0) return null;
  const round: { round_id: string; messages: UnpublishedRound['messages']; events: Array<[string, number]> } = rounds[0];
  const { rows: events } = round.events.length === 0 ? { rows: [] } : await db.raw(
    `SELECT e.payload FROM jsonb_array_elements(?::jsonb) WITH ORDINALITY AS ref(value, n)
       JOIN account_events e ON e.account_id = (ref.value->>0)::uuid AND e.account_seq = (ref.value->>1)::bigint
      ORDER BY ref.n`,
    [JSON.stringify(round.events)],
  );
  return { roundId: round.round_id, messages: round.messages, events: (events as Array<{ payload: DomainEventEnvelope }>).map((e) => e.payload) };
}

/** Gives up a claim (the send failed), so the next sweep tries the round again without waiting out the lease. */
export async function releaseRoundClaim(db: Knex, roundId: string): Promise<void> {
  await db('outbox_rounds').where('round_id', roundId).update({ claimed_until: null });
}
