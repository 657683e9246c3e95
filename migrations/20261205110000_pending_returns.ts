// The transfers with a return the partner has not answered yet (DESIGN.md section 5h): the
// partners role's deadline reads them every few seconds (consumers/partners/return-deadline.ts),
// and they are few, so a partial index holds them rather than a scan of every transfer.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX transfers_pending_returns ON transfers (partner) WHERE reversals @> '[{"status": "pending"}]'::jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS transfers_pending_returns');
}
