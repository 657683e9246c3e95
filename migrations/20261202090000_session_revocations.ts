// Sign-outs kept in Postgres: a signed-out session was only a marker in Redis, so after a Redis
// flush (or a Redis that lost its data) a signed-out token worked again until it expired. Each
// row says a session (its `jti`) is signed out until its token's own expiry.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('session_revocations', (t) => {
    t.uuid('session_id').primary();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE INDEX session_revocations_expiry ON session_revocations (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('session_revocations');
}
