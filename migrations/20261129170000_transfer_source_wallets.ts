// The wallet a transfer's money came from (DESIGN.md section 5g): a capture of a hold on a wallet
// pays its recipient from that wallet, and when the rail fails or reverses the payout the money
// goes back there, not to the main balance (ledger/commands/transfer-partner-result.ts). Null: the main
// balance, as for every transfer POST /v1/transfers makes.
//
// Captures paid before this column existed are found by the holds that list them, so a payout
// still executing when it is added goes back to its wallet too.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE transfers ADD COLUMN from_wallet_id uuid REFERENCES wallets (id)');
  await knex.raw(`UPDATE transfers AS t SET from_wallet_id = h.wallet_id
    FROM holds AS h, jsonb_array_elements(h.captures) AS c
    WHERE h.wallet_id IS NOT NULL AND (c->>'transfer_id')::uuid = t.id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE transfers DROP COLUMN from_wallet_id');
}
