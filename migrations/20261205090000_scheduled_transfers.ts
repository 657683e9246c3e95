// Scheduled transfers (DESIGN.md section 5i): a transfer body to send at run_at, and again every
// day, week or month up to repeat_count runs in all. The API writes a schedule and cancels it; the
// due-runs worker beside the ledger (consumers/ledger/scheduled-runs.ts) claims each occurrence,
// sends its transfer to the ledger under an id derived from the schedule and the occurrence, and
// records what the ledger decided. A run's row is written when its occurrence is claimed, so an
// occurrence is claimed once (its primary key) and its command, sent again after a crash, names
// the same transfer.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('scheduled_transfers', (t) => {
    t.uuid('id').primary();
    t.uuid('account_id').notNullable().references('accounts.id');
    t.text('status').notNullable();
    // The body of POST /v1/transfers as the client gave it; the request's fingerprint tells a
    // repeated request (the same schedule) from another one under the same Idempotency-Key.
    t.jsonb('transfer').notNullable();
    t.text('fingerprint').notNullable();
    t.timestamp('run_at', { useTz: true }).notNullable();
    t.text('repeat_every');
    t.integer('repeat_count').notNullable();
    // The occurrence (1, 2, ...) the worker claims next, and when it falls due; repeat_count + 1
    // and null once every occurrence was claimed, or when the schedule is cancelled.
    t.integer('next_occurrence').notNullable();
    t.timestamp('next_run_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('cancelled_at', { useTz: true });
  });
  await knex.raw(`ALTER TABLE scheduled_transfers ADD CONSTRAINT scheduled_transfers_status_known CHECK (status IN ('scheduled', 'completed', 'cancelled'))`);
  await knex.raw(`ALTER TABLE scheduled_transfers ADD CONSTRAINT scheduled_transfers_repeat_known CHECK (
    (repeat_every IS NULL AND repeat_count = 1) OR (repeat_every IN ('day', 'week', 'month') AND repeat_count BETWEEN 1 AND 120))`);
  // Only a schedule that runs again has a next run, and never past its last occurrence.
  await knex.raw(`ALTER TABLE scheduled_transfers ADD CONSTRAINT scheduled_transfers_next_run CHECK (
    next_occurrence BETWEEN 1 AND repeat_count + 1 AND (status = 'scheduled') = (next_run_at IS NOT NULL)
    AND (status <> 'scheduled' OR next_occurrence <= repeat_count) AND (status <> 'completed' OR next_occurrence = repeat_count + 1))`);
  await knex.raw('CREATE INDEX scheduled_transfers_account_created ON scheduled_transfers (account_id, created_at DESC, id DESC)');
  // The worker's question, "which schedules are due?", on the scheduled ones alone.
  await knex.raw(`CREATE INDEX scheduled_transfers_due ON scheduled_transfers (next_run_at) WHERE status = 'scheduled'`);

  await knex.schema.createTable('scheduled_transfer_runs', (t) => {
    t.uuid('schedule_id').notNullable().references('scheduled_transfers.id');
    t.integer('occurrence').notNullable();
    t.uuid('account_id').notNullable();
    // When the occurrence fell due by the schedule's rule, and when it ran (claimed: later, when
    // the worker was away at its time).
    t.timestamp('scheduled_for', { useTz: true }).notNullable();
    t.timestamp('run_at', { useTz: true }).notNullable();
    t.text('command_id').notNullable().unique();
    t.uuid('transfer_id').notNullable();
    t.text('status').notNullable();
    t.jsonb('error');
    // When its command was last sent to the ledger, and how many times: one not decided some time
    // after is sent again, each time waiting twice as long (a ledger behind a backlog is not sent
    // more and more copies of what it has yet to reach).
    t.timestamp('sent_at', { useTz: true }).notNullable();
    t.integer('sends').notNullable().defaultTo(1);
    t.timestamp('decided_at', { useTz: true });
    t.primary(['schedule_id', 'occurrence']);
  });
  await knex.raw(`ALTER TABLE scheduled_transfer_runs ADD CONSTRAINT scheduled_transfer_runs_status_known CHECK (
    (status = 'pending' AND error IS NULL AND decided_at IS NULL) OR (status = 'created' AND error IS NULL AND decided_at IS NOT NULL)
    OR (status = 'refused' AND error IS NOT NULL AND decided_at IS NOT NULL))`);
  await knex.raw(`CREATE INDEX scheduled_transfer_runs_pending ON scheduled_transfer_runs (sent_at) WHERE status = 'pending'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE scheduled_transfer_runs');
  await knex.raw('DROP TABLE scheduled_transfers');
}
