// Test clocks (DESIGN.md section 5i, sandbox only): a clock's time, frozen until it is advanced,
// and the accounts that live on it. An advance records where it is going (advancing_to) before
// anything moves, so a process that dies mid-advance leaves the clock `advancing` with its target,
// and another takes it over once the lease of the first (claimed_until) has run out.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('test_clocks', (t) => {
    t.uuid('id').primary();
    t.text('name');
    t.text('status').notNullable();
    // The clock's time now: during an advance, the instant it has stepped to so far.
    t.timestamp('frozen_time', { useTz: true }).notNullable();
    t.timestamp('advancing_to', { useTz: true });
    // The advancing worker's lease (wall time): renewed at each step, taken over once it ran out.
    t.uuid('claim_id');
    t.timestamp('claimed_until', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw(`ALTER TABLE test_clocks ADD CONSTRAINT test_clocks_status_known CHECK (
    (status = 'ready' AND advancing_to IS NULL) OR (status = 'advancing' AND advancing_to >= frozen_time))`);
  // The worker's question, "which clocks are advancing?", on those alone.
  await knex.raw(`CREATE INDEX test_clocks_advancing ON test_clocks (claimed_until) WHERE status = 'advancing'`);
  await knex.schema.alterTable('accounts', (t) => {
    t.uuid('test_clock_id').references('test_clocks.id');
  });
  await knex.raw('CREATE INDEX accounts_test_clock ON accounts (test_clock_id) WHERE test_clock_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('accounts', (t) => { t.dropColumn('test_clock_id'); });
  await knex.schema.dropTable('test_clocks');
}
