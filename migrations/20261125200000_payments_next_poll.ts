// When the settler polls an open payment next (consumers/partners/settler.ts). Every poll moves it
// on, whether or not the partner's answer changed anything, so the open payments are taken in turn:
// ordered by updated_at, a hundred unchanged ones (unclaimed claim links, payments of a revoked
// link) were taken first on every round and the rest were never polled. A new payment is due at
// once. The index is per partner: each partner's payments are settled by a lane of their own.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payments ADD COLUMN next_poll_at timestamptz NOT NULL DEFAULT now()');
  await knex.raw(`CREATE INDEX payments_due ON payments (partner, next_poll_at) WHERE status IN ('pending', 'sent', 'authorized')`);
  await knex.raw('DROP INDEX payments_open');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX payments_open ON payments (updated_at) WHERE status IN ('pending', 'sent', 'authorized')`);
  await knex.raw('DROP INDEX payments_due');
  await knex.raw('ALTER TABLE payments DROP COLUMN next_poll_at');
}
