// The outbox (DESIGN.md section 3): every event and message of a change is written in the change's own
// transaction, as one round, and published to Kafka after the commit (at once by its writer, or later by
// the sweeper). This folder is the outbox: its rounds written and marked published (here), its rows as
// the ledger writes them (rows.ts), their encoding for Kafka (encode.ts), a round published after its
// commit (publish-round.ts), the sweeper of rounds left unpublished (claims.ts, sweeper.ts), and the
// messages Kafka could never take, set aside (set-aside.ts). The ledger's rounds write their outbox in
// their own statement (ledger/store/round-write.ts); every surface's own changes (a reconciliation, an
// endpoint disabled) write theirs here.
import type { Knex } from 'knex';
import type pg from 'pg';
import { copyIntoClient } from '../../ledger/pg/copy';
import type { OutboxWrite } from '../../ledger/ports';
import { ACCOUNT_EVENT_COLUMNS, INSERT_ROUND, numberAccountEvents, outboxRoundRows } from '../../ledger/store/round-write';

type Db = Knex | Knex.Transaction;

/**
 * Writes a round of messages to the outbox, its account events numbered, and marks it unpublished
 * until Kafka has it (the writer's publisher, or the sweeper).
 */
export async function writeOutboxRound(trx: Knex.Transaction, roundId: string, outbox: OutboxWrite[]): Promise<void> {
  // Inside a transaction knex hands out the connection the transaction runs on.
  const client = (await trx.client.acquireConnection()) as pg.Client;
  await numberAccountEvents(client, outbox);
  const { accountEvents, rounds } = outboxRoundRows(roundId, outbox);
  await copyIntoClient(client, 'account_events', ACCOUNT_EVENT_COLUMNS, accountEvents);
  await client.query(INSERT_ROUND, [JSON.stringify(rounds)]);
}

/** The rounds' messages reached Kafka. */
export async function markRoundsPublished(db: Db, roundIds: string[]): Promise<void> {
  await db('outbox_rounds').whereIn('round_id', roundIds).delete();
}
