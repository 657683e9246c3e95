// The outbox sweeper claims a round by a lease, not by a row lock it would hold while it sends to
// Kafka (consumers/ledger/sweeper.ts): a round that removes the round's mark (the writer's
// publisher had it acknowledged meanwhile) waited on that lock, holding its ledger accounts, for
// as long as Kafka took. `claimed_until`: until when a sweeper is sending the round; null when none is.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE outbox_rounds ADD COLUMN claimed_until timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE outbox_rounds DROP COLUMN claimed_until');
}
