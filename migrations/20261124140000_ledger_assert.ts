// A ledger round is written by one statement sent together with its COMMIT (ledger/store/round-write.ts):
// a check the statement must pass (every executed quote found unconsumed) is made inside it, so a
// failed check aborts the transaction before COMMIT runs.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION ledger_assert(ok boolean, message text) RETURNS boolean LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT ok THEN RAISE EXCEPTION 'ledger round refused: %', message USING ERRCODE = 'check_violation'; END IF;
      RETURN true;
    END $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS ledger_assert(boolean, text)');
}
