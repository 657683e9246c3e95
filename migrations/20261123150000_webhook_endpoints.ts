// Webhook endpoints (DESIGN.md section 5d): where an account's events are delivered, which of
// them, and the signing secret, sealed at rest (src/vault.ts). During a rotation the previous
// secret keeps signing beside the new one until previous_secret_expires_at.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('url').notNullable();
    t.text('description');
    t.specificType('events', 'text[]').notNullable(); // empty: every event type
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('disabled_reason');
    t.text('secret_sealed').notNullable();
    t.text('previous_secret_sealed');
    t.timestamp('previous_secret_expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['account_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_previous_secret_expires
    CHECK ((previous_secret_sealed IS NULL) = (previous_secret_expires_at IS NULL))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_endpoints');
}
