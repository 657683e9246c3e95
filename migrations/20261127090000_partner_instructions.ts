// One row per transfer a partner dispatcher has executed an instruction of: the attempt it last
// claimed and where that message came from. An instruction runs only when its attempt is newer
// than the claimed one (or it is the very message that claimed it, delivered again after a
// failed batch), so a stale copy of an instruction (an outbox round published twice, a batch
// re-run) cannot start a second retry chain for one transfer (consumers/partners/claims.ts).
// `unreachable_since` marks an executing transfer past its deadline whose partner could not be
// asked: its funds stay held, and the row says since when (operators read it there and in the logs).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('partner_instructions', (t) => {
    t.text('transfer_id').primary();
    t.integer('attempt').notNullable();
    t.text('source').notNullable();
    t.timestamp('claimed_at', { useTz: true }).notNullable();
    t.timestamp('unreachable_since', { useTz: true });
    t.text('unreachable_reason');
  });
  // A transfer a partner paid after the ledger had failed it: the failure it overturned, and what
  // the sender's balance did not cover (owed through the late-completion receivable).
  await knex.schema.alterTable('transfers', (t) => {
    t.jsonb('late_completion');
  });
  // The deadline check reads the executing transfers, oldest first, and nothing else.
  await knex.raw(`CREATE INDEX transfers_executing_since ON transfers (updated_at) WHERE status = 'executing'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX transfers_executing_since');
  await knex.schema.alterTable('transfers', (t) => {
    t.dropColumn('late_completion');
  });
  await knex.schema.dropTable('partner_instructions');
}
