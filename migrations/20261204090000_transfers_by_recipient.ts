// Finding an account's transfers to one recipient (DESIGN.md section 5h, "Finding things":
// GET /v1/transfers?recipient_email=). The list compares the email the transfer shows,
// lower-cased, with the one form of an address (ledger/emails.ts; stored addresses are ASCII, on
// which the two agree), newest first: this index answers it, with a window on created_at, in time
// that does not grow with the account's other transfers. The other filters of the lists (from/to,
// currency, status) read the (account_id, created_at) indexes the lists already had.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX transfers_account_recipient ON transfers (account_id, lower(recipient->>'email'), created_at DESC, id DESC)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS transfers_account_recipient');
}
