// The mock partners' own books, in a schema of their own (mock_rails) apart from the service's
// tables: the partners stand for outside systems, which keep their payments, grants and users
// across restarts as a real partner does. Every row belongs to one book (a deployment of the
// rails; tests run several side by side) and one partner of it.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE mock_rails.payments (
      book text NOT NULL,
      partner text NOT NULL,
      id text NOT NULL,
      reference text NOT NULL,
      amount numeric NOT NULL CHECK (amount > 0),
      currency text NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      tx_hash text,
      claim_link text,
      -- A status change that comes due at a time (confirmation, settlement, reversal, expiry).
      due_status text,
      due_at timestamptz,
      -- The user whose token submitted it: a customer of the client, or the client itself.
      owner_user_id bigint NOT NULL,
      scenario text,
      -- When the partner settled it with the client (what its statements list).
      settled_at timestamptz,
      PRIMARY KEY (book, partner, id),
      UNIQUE (book, partner, reference),
      CHECK ((due_status IS NULL) = (due_at IS NULL))
    );
    CREATE INDEX payments_due ON mock_rails.payments (book, partner, due_at) WHERE due_at IS NOT NULL;
    CREATE INDEX payments_settled ON mock_rails.payments (book, partner, settled_at) WHERE settled_at IS NOT NULL;

    -- Submits of a reference in the outage scenario, which fail until enough were made.
    CREATE TABLE mock_rails.outage_attempts (
      book text NOT NULL, partner text NOT NULL, reference text NOT NULL, attempts integer NOT NULL,
      PRIMARY KEY (book, partner, reference)
    );

    -- OAuth 2.0 secrets are kept as SHA-256 digests: the partner can check one, never show it.
    CREATE TABLE mock_rails.access_tokens (
      book text NOT NULL, partner text NOT NULL, token_sha256 text NOT NULL,
      account_id bigint NOT NULL, user_id bigint NOT NULL, expires_at timestamptz NOT NULL,
      PRIMARY KEY (book, partner, token_sha256)
    );
    CREATE INDEX access_tokens_expiry ON mock_rails.access_tokens (expires_at);
    CREATE TABLE mock_rails.refresh_tokens (
      book text NOT NULL, partner text NOT NULL, token_sha256 text NOT NULL,
      account_id bigint NOT NULL, user_id bigint NOT NULL, issued_at timestamptz NOT NULL,
      PRIMARY KEY (book, partner, token_sha256)
    );
    CREATE TABLE mock_rails.authorization_codes (
      book text NOT NULL, partner text NOT NULL, code_sha256 text NOT NULL,
      redirect_uri text NOT NULL, user_id bigint NOT NULL, expires_at timestamptz NOT NULL,
      PRIMARY KEY (book, partner, code_sha256)
    );
    CREATE INDEX authorization_codes_expiry ON mock_rails.authorization_codes (expires_at);
    CREATE TABLE mock_rails.consent_forms (
      book text NOT NULL, partner text NOT NULL, token_sha256 text NOT NULL,
      request text NOT NULL, expires_at timestamptz NOT NULL,
      PRIMARY KEY (book, partner, token_sha256)
    );
    CREATE INDEX consent_forms_expiry ON mock_rails.consent_forms (expires_at);

    -- The partner's end users, one per approved authorization, numbered per partner.
    CREATE TABLE mock_rails.end_user_counters (
      book text NOT NULL, partner text NOT NULL, last_user_id bigint NOT NULL,
      PRIMARY KEY (book, partner)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS mock_rails.payments, mock_rails.outage_attempts, mock_rails.access_tokens,
    mock_rails.refresh_tokens, mock_rails.authorization_codes, mock_rails.consent_forms, mock_rails.end_user_counters`);
}
