// A reconciliation reads the range's days in full and, from the days around them, only the
// movements of the payments its statement lines name (src/reconciliation/run.ts): found by the
// partner's reference, then the payment's journal entries. Transfers' entries have no payment, so
// the entries' index holds payments' entries alone.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX payments_partner_reference ON payments (partner, external_id) WHERE external_id IS NOT NULL');
  await knex.raw('CREATE INDEX journal_entries_payment ON journal_entries (payment_id) WHERE payment_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX journal_entries_payment');
  await knex.raw('DROP INDEX payments_partner_reference');
}
