// The outbox, written per round instead of per message. Before, every message of a ledger round
// (its events, entries and partner instructions) was a row of `outbox` with five indexes, kept
// for good; at about six rows per transfer it was half the ledger's rows and WAL. Now:
// - an account's domain events live in `account_events`, keyed by (account, account_seq): the
//   event streams replay from it (src/notifications/store.ts);
// - a round that Kafka has not acknowledged yet is one row of `outbox_rounds`: the messages no
//   other table holds (entries, partner instructions, operator events), and references to its
//   account events; the row is deleted once Kafka has all of it, so it holds only what is in
//   flight.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE account_events (
      account_id uuid NOT NULL,
      account_seq bigint NOT NULL,
      id uuid NOT NULL,
      payload jsonb NOT NULL,
      PRIMARY KEY (account_id, account_seq)
    )`);
  await knex.raw(`
    CREATE TABLE outbox_rounds (
      round_id uuid PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      messages jsonb NOT NULL,
      events jsonb NOT NULL
    )`);
  await knex.raw(`
    INSERT INTO account_events (account_id, account_seq, id, payload)
    SELECT account_id, account_seq, id, payload FROM outbox
     WHERE topic = 'domain.events' AND account_id IS NOT NULL AND account_seq IS NOT NULL`);
  await knex.raw(`
    INSERT INTO outbox_rounds (round_id, created_at, messages, events)
    SELECT r.round_id, r.created_at,
           coalesce((SELECT jsonb_agg(jsonb_build_object('topic', o.topic, 'key', o.message_key, 'payload', o.payload) ORDER BY o.seq)
                       FROM outbox o WHERE o.round_id = r.round_id AND NOT (o.topic = 'domain.events' AND o.account_seq IS NOT NULL)), '[]'),
           coalesce((SELECT jsonb_agg(jsonb_build_array(o.account_id, o.account_seq) ORDER BY o.seq)
                       FROM outbox o WHERE o.round_id = r.round_id AND o.topic = 'domain.events' AND o.account_seq IS NOT NULL), '[]')
      FROM outbox_unpublished_rounds r`);
  await knex.schema.dropTable('outbox_unpublished_rounds');
  await knex.schema.dropTable('outbox');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE outbox (
      seq bigserial PRIMARY KEY,
      id uuid NOT NULL UNIQUE,
      round_id uuid NOT NULL,
      topic text NOT NULL,
      message_key text NOT NULL,
      account_id uuid,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      account_seq bigint
    )`);
  await knex.raw('CREATE INDEX outbox_round_id_index ON outbox (round_id)');
  await knex.raw(`CREATE INDEX outbox_account_events ON outbox (account_id, seq) WHERE topic = 'domain.events'`);
  await knex.raw('CREATE UNIQUE INDEX outbox_account_seq ON outbox (account_id, account_seq) WHERE account_seq IS NOT NULL');
  await knex.raw(`
    CREATE TABLE outbox_unpublished_rounds (round_id uuid PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())`);
  // Published account events were kept; each gets a round of its own, published.
  await knex.raw(`
    INSERT INTO outbox (id, round_id, topic, message_key, account_id, account_seq, payload, created_at)
    SELECT e.id, coalesce(r.round_id, gen_random_uuid()), 'domain.events', e.payload->>'resource_id', e.account_id, e.account_seq, e.payload,
           (e.payload->>'created_at')::timestamptz
      FROM account_events e
      LEFT JOIN LATERAL (SELECT round_id FROM outbox_rounds r, jsonb_array_elements(r.events) ref
                          WHERE ref->>0 = e.account_id::text AND (ref->>1)::bigint = e.account_seq LIMIT 1) r ON true
     ORDER BY e.account_id, e.account_seq`);
  await knex.raw(`
    INSERT INTO outbox (id, round_id, topic, message_key, account_id, payload, created_at)
    SELECT gen_random_uuid(), r.round_id, m->>'topic', m->>'key', NULL, m->'payload', r.created_at
      FROM outbox_rounds r, jsonb_array_elements(r.messages) m`);
  await knex.raw('INSERT INTO outbox_unpublished_rounds (round_id, created_at) SELECT round_id, created_at FROM outbox_rounds');
  await knex.schema.dropTable('outbox_rounds');
  await knex.schema.dropTable('account_events');
}
