// Stored email addresses are ASCII (every route that stores one takes the email format, which is
// ASCII): on ASCII, Postgres's lower() and the service's one form of an address (ledger/emails.ts)
// agree, so `lower(email)` compared with that form of what a client sent finds the same account
// whichever side lower-cases. The check keeps it so for rows written any other way.
import type { Knex } from 'knex';

const ASCII = `email ~ '^[\\x21-\\x7e]+$'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE accounts ADD CONSTRAINT accounts_email_ascii CHECK (${ASCII})`);
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_email_ascii CHECK (${ASCII})`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE accounts DROP CONSTRAINT IF EXISTS accounts_email_ascii');
  await knex.raw('ALTER TABLE customers DROP CONSTRAINT IF EXISTS customers_email_ascii');
}
