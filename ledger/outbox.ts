// The outbox (DESIGN.md section 3): every event and message of a change is written in the change's own
// transaction, as one round, and published to Kafka after the commit (at once by its writer, or later by
// the sweeper). Its one writer: the ledger's rounds and every surface's own changes (a reconciliation,
// an endpoint disabled) use it.
import type { Knex } from 'knex';
import type pg from 'pg';
import type { DomainEventEnvelope } from './messages';
import { copyIntoClient } from './pg/copy';
import type { OutboxWrite } from './ports';
import { ACCOUNT_EVENT_COLUMNS, INSERT_ROUND, numberAccountEvents, outboxRoundRows } from './store/round-write';

type Db = Knex | Knex.Transaction;

/**
 * Writes a round of messages to the outbox, its account events numbered, and marks it unpublished
 * until Kafka has it (the writer's publisher, or the sweeper). `at`: an ISO 8601 instant.
 */
export async function writeOutboxRound(trx: Knex.Transaction, roundId: string, outbox: OutboxWrite[], at: string): Promise<void> {
  // Inside a transaction knex hands out the connection the transaction runs on.
  const client = (await trx.client.acquireConnection()) as pg.Client;
  await numberAccountEvents(client, outbox);
  const { accountEvents, rounds } = outboxRoundRows(roundId, outbox, at);
  await copyIntoClient(client, 'account_events', ACCOUNT_EVENT_COLUMNS, accountEvents);
  await client.query(INSERT_ROUND, [JSON.stringify(rounds)]);
}

/** The rounds' messages reached Kafka. */
export async function markRoundsPublished(db: Db, roundIds: string[]): Promise<void> {
  await db('outbox_rounds').whereIn('round_id', roundIds).delete();
}

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
