// Partner links (DESIGN.md section 5c): a customer's consent, given on a partner's page, that
// lets this service pay through that partner for the customer. The link request's `state` is
// kept only as a hash (it is a bearer secret in a URL) and is spent by the first callback; the
// partner's tokens are kept sealed (src/partners/token-vault.ts).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('partner_links', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.uuid('customer_id').notNullable().references('customers.id');
    t.text('partner').notNullable();
    t.text('status').notNullable();
    t.text('state_hash').unique();
    t.timestamp('state_expires_at', { useTz: true });
    t.text('access_token_sealed');
    t.text('refresh_token_sealed');
    t.timestamp('access_token_expires_at', { useTz: true });
    t.bigInteger('partner_user_id');
    t.text('failure_code');
    t.text('failure_message');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('linked_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.index(['customer_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE partner_links ADD CONSTRAINT partner_links_status_known CHECK (status IN ('pending', 'active', 'failed', 'revoked'))`);
  // An active link has its tokens; nothing else keeps any.
  await knex.raw(`ALTER TABLE partner_links ADD CONSTRAINT partner_links_tokens_only_when_active
    CHECK ((status = 'active') = (access_token_sealed IS NOT NULL AND refresh_token_sealed IS NOT NULL AND access_token_expires_at IS NOT NULL))`);
  // One active link per customer and partner.
  await knex.raw(`CREATE UNIQUE INDEX partner_links_one_active ON partner_links (customer_id, partner) WHERE status = 'active'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('partner_links');
}
