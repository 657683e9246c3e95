// Two announcements, in the transaction that makes the change (NOTIFY is sent at commit), so the
// ledger's workers need not ask Postgres every few hundred milliseconds whether there is work:
// - `test_clock_advances`, with the clock's id, when a test clock starts advancing: the advancing
//   workers take it up at once (consumers/ledger/clock-advance.ts);
// - `scheduled_transfers_added` when schedules are written: the due-runs worker, which otherwise
//   sleeps until the next occurrence it knows of, looks again (consumers/ledger/scheduled-runs.ts).
// A schedule only ever falls due later after it is written (a claim moves its next run on, a
// cancel ends it), so its insert is the one change that can bring work forward.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE FUNCTION announce_test_clock_advance() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('test_clock_advances', NEW.id::text);
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER test_clock_advances AFTER INSERT OR UPDATE OF status ON test_clocks
    FOR EACH ROW WHEN (NEW.status = 'advancing') EXECUTE FUNCTION announce_test_clock_advance()`);
  await knex.raw(`CREATE FUNCTION announce_scheduled_transfers_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('scheduled_transfers_added', '');
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER scheduled_transfers_added AFTER INSERT ON scheduled_transfers
    FOR EACH STATEMENT EXECUTE FUNCTION announce_scheduled_transfers_added()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER scheduled_transfers_added ON scheduled_transfers');
  await knex.raw('DROP FUNCTION announce_scheduled_transfers_added()');
  await knex.raw('DROP TRIGGER test_clock_advances ON test_clocks');
  await knex.raw('DROP FUNCTION announce_test_clock_advance()');
}
