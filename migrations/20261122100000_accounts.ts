// Accounts, credentials, customers and contacts (SPEC.md sections 2 and 5; DESIGN.md section 5).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pgcrypto');

  await knex.schema.createTable('accounts', (t) => {
    t.uuid('id').primary();
    t.text('email').notNullable();
    t.text('password_hash').notNullable();
    t.text('business_name').notNullable();
    t.specificType('country_code', 'char(2)').notNullable();
    t.text('kyb_status').notNullable().defaultTo('active');
    t.text('environment').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE UNIQUE INDEX accounts_email_unique ON accounts (lower(email))');
  await knex.raw(`ALTER TABLE accounts ADD CONSTRAINT accounts_kyb_status_known
    CHECK (kyb_status IN ('pending', 'in_review', 'active', 'rejected', 'suspended'))`);

  await knex.schema.createTable('vibans', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('currency').notNullable();
    t.text('bank_name').notNullable();
    t.specificType('bank_country', 'char(2)').notNullable();
    t.text('account_number').notNullable().unique();
    t.text('routing_number').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['account_id', 'currency']);
  });

  await knex.schema.createTable('chain_wallets', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id').unique();
    t.text('network').notNullable();
    t.text('address').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('type').notNullable();
    t.text('environment').notNullable();
    t.text('name');
    // SHA-256 of the whole key: keys carry 190 bits of randomness, so a fast hash is enough and
    // a lookup by hash leaks nothing about near misses.
    t.text('key_hash').notNullable().unique();
    t.text('key_hint').notNullable();
    t.specificType('scopes', 'text[]').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.index(['account_id']);
  });
  await knex.raw(`ALTER TABLE api_keys ADD CONSTRAINT api_keys_type_known CHECK (type IN ('secret', 'publishable', 'restricted'))`);

  await knex.schema.createTable('customers', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('email').notNullable();
    t.text('business_name').notNullable();
    t.specificType('country_code', 'char(2)').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE UNIQUE INDEX customers_account_email_unique ON customers (account_id, lower(email))');
  await knex.raw('CREATE INDEX customers_account_created ON customers (account_id, created_at DESC, id DESC)');

  await knex.schema.createTable('contacts', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('name').notNullable();
    t.text('email').notNullable();
    t.jsonb('bank');
    t.text('note');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE INDEX contacts_account_created ON contacts (account_id, created_at DESC, id DESC)');

  // The durable half of idempotency: survives a Redis flush (DESIGN.md section 5).
  await knex.schema.createTable('idempotency_records', (t) => {
    t.text('scope').notNullable();
    t.text('idempotency_key').notNullable();
    t.text('fingerprint').notNullable();
    t.text('state').notNullable();
    t.integer('response_status');
    t.jsonb('response_body');
    t.timestamp('locked_until', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['scope', 'idempotency_key']);
  });
  await knex.raw(`ALTER TABLE idempotency_records ADD CONSTRAINT idempotency_state_known CHECK (state IN ('in_progress', 'completed'))`);

  await knex.schema.createTable('request_logs', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id');
    t.text('credential_id');
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.text('query').notNullable();
    t.integer('status').notNullable();
    t.integer('duration_us').notNullable();
    t.text('idempotency_key');
    t.jsonb('request_body');
    t.jsonb('response_body');
    t.text('error_code');
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  await knex.raw('CREATE INDEX request_logs_account_created ON request_logs (account_id, created_at DESC, id DESC)');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['request_logs', 'idempotency_records', 'contacts', 'customers', 'api_keys', 'chain_wallets', 'vibans', 'accounts']) {
    await knex.schema.dropTableIfExists(table);
  }
}
