// FX in the ledger (DESIGN.md section 5b). Transfers across currencies record what the recipient
// receives, in which currency, and the price fixed while the transfer was quoting; a transfer in
// one currency pays out its own amount, so the existing ones are filled in with that. A
// conversion's journal entry names the quote it executed, at most one entry per quote.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('journal_entries', (t) => {
    t.uuid('fx_quote_id').references('fx_quotes.id').unique();
  });
  await knex.schema.alterTable('transfers', (t) => {
    t.decimal('payout_amount', 38, 6);
    t.text('payout_currency');
    t.decimal('fx_rate', 20, 6);
    t.decimal('fx_mid_rate', 20, 6);
    t.decimal('fx_spread', 10, 6);
  });
  await knex('transfers').update({ payout_amount: knex.ref('amount'), payout_currency: knex.ref('currency') });
  await knex.schema.alterTable('transfers', (t) => {
    t.dropNullable('payout_amount');
    t.dropNullable('payout_currency');
  });
  await knex.raw(`ALTER TABLE transfers ADD CONSTRAINT transfers_conversion_priced
    CHECK ((payout_currency = currency) = (fx_rate IS NULL) AND (fx_rate IS NULL) = (fx_mid_rate IS NULL) AND (fx_rate IS NULL) = (fx_spread IS NULL))`);
  await knex.raw('ALTER TABLE transfers ADD CONSTRAINT transfers_payout_positive CHECK (payout_amount > 0)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('journal_entries', (t) => { t.dropColumn('fx_quote_id'); });
  await knex.schema.alterTable('transfers', (t) => {
    t.dropColumns('payout_amount', 'payout_currency', 'fx_rate', 'fx_mid_rate', 'fx_spread');
  });
}
