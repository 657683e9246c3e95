// What an operator and the settler need to know of a partner that could not be reached.
// partner_instructions.unreachable_checks: how many deadline checks of an executing transfer found
// its partner unreachable (consumers/partners/deadline.ts); the transfers still marked are listed
// for the operator (GET /v1/unreachable-transfers), longest unreachable first.
// payments.partner_unreachable_at: the last time a submission or lookup of a pending payment could
// not reach its partner; the pending deadline counts from it (or from the payment's creation,
// if later), so time the partner was away never fails a payment (consumers/partners/settler.ts).
// Written by the settler and the submitting request, never by the ledger.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE partner_instructions ADD COLUMN unreachable_checks integer NOT NULL DEFAULT 0');
  await knex.raw('UPDATE partner_instructions SET unreachable_checks = 1 WHERE unreachable_since IS NOT NULL');
  await knex.raw('ALTER TABLE payments ADD COLUMN partner_unreachable_at timestamptz');
  await knex.raw('CREATE INDEX partner_instructions_unreachable ON partner_instructions (unreachable_since, transfer_id) WHERE unreachable_since IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX partner_instructions_unreachable');
  await knex.raw('ALTER TABLE payments DROP COLUMN partner_unreachable_at');
  await knex.raw('ALTER TABLE partner_instructions DROP COLUMN unreachable_checks');
}
