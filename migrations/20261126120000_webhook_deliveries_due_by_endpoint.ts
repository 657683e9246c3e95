// Claiming webhook deliveries goes endpoint by endpoint (src/webhooks/deliveries.ts): it hops from
// one endpoint with pending deliveries to the next in this index, and reads the due ones of the
// enabled endpoints alone, oldest first. A disabled endpoint's backlog costs one hop, however
// long; the index of all pending deliveries by due time, which it replaces, made every claim read
// that backlog first.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX webhook_deliveries_pending_by_endpoint ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending'`);
  await knex.raw('DROP INDEX webhook_deliveries_due');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);
  await knex.raw('DROP INDEX webhook_deliveries_pending_by_endpoint');
}
