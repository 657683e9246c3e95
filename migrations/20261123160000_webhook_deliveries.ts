// Webhook deliveries (DESIGN.md section 5d): one row per event and endpoint, the exact body every
// attempt signs and sends, and its state; one row per attempt beside it. `next_attempt_at` is
// when a pending delivery is due, and while an attempt is on its way it is the attempt's lease:
// a dispatcher that dies mid-delivery leaves a row that falls due again, so nothing is lost.
// `failing_since` on the endpoint counts the time it has answered nothing but failures.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.timestamp('failing_since', { useTz: true });
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.uuid('event_id').notNullable();
    t.text('event_type').notNullable();
    t.bigInteger('account_seq'); // null for test events, which are outside the account's sequence
    t.text('body').notNullable();
    t.text('status').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true });
    t.timestamp('last_attempt_at', { useTz: true });
    t.integer('last_response_status');
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.unique(['endpoint_id', 'event_id']);
    t.index(['endpoint_id', 'created_at', 'id']);
  });
  await knex.raw(`ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_delivery_status CHECK (status IN ('pending', 'delivered', 'failed'))`);
  await knex.raw(`ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_delivery_due CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))`);
  await knex.raw(`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);
  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.uuid('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.integer('duration_ms').notNullable();
    t.integer('response_status');
    t.text('response_body'); // truncated (src/webhooks/post.ts)
    t.text('error'); // timeout, refused connection, ...: why there is no response
    t.primary(['delivery_id', 'attempt']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_delivery_attempts');
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('failing_since');
  });
}
