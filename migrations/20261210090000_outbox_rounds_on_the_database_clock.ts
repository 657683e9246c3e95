// An unpublished outbox round's created_at is the database's clock from now on
// (ledger/store/round-write.ts): the sweeper takes rounds older than a while by that clock. Rounds
// were stamped with their own instant, which for a round decided at a test clock's time (a
// scheduled run, a clock's advance) lies years ahead: one left behind by a writer that died was
// never old enough to sweep, and its events never reached Kafka. Such rounds are brought back to now.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('UPDATE outbox_rounds SET created_at = now() WHERE created_at > now()');
}

export async function down(): Promise<void> {
  // Nothing to undo: a round's instant ahead of the clock was never wanted.
}
