// Every migration runs up and down cleanly, on a database of its own.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parseOutcome } from '../../ledger/outcome';
import { transferView } from '../../src/http/outcomes';
import { createDb, ensureDatabase, migrationConfig, type Db } from '../../src/db';

describe('migrations', () => {
  let db: Db;
  before(async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `${url.pathname}_migrations`; // a database of its own, beside the run's
    await ensureDatabase(url.toString());
    db = createDb(url.toString(), 2);
    await db.migrate.rollback(migrationConfig(), true);
  });
  after(async () => db.destroy());

  const tables = async () => (await db.raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'knex_%' ORDER BY 1`)).rows.map((r: { tablename: string }) => r.tablename);

  it('runs every migration up, all the way down, and up again', async () => {
    const [, applied] = await db.migrate.latest(migrationConfig());
    assert.ok(applied.length >= 1);
    const afterUp = await tables();
    assert.ok(afterUp.includes('accounts'));

    await db.migrate.rollback(migrationConfig(), true);
    assert.deepEqual(await tables(), []);

    await db.migrate.latest(migrationConfig());
    assert.deepEqual(await tables(), afterUp);
  });

  it('turns stored ledger replies into outcomes, and back', async () => {
    const outcomesMigration = { ...migrationConfig(), name: '20261123100000_processed_command_outcomes.js' };
    await db.migrate.latest(migrationConfig());
    await db.migrate.down(outcomesMigration); // before processed_commands kept outcomes
    const account = randomUUID();
    const transfer = randomUUID();
    const at = '2026-11-20T10:00:00.000Z';
    await db('accounts').insert({ id: account, email: `${account}@example.com`, password_hash: 'x', business_name: 'Old Replies Ltd', country_code: 'GB', environment: 'sandbox' });
    await db('transfers').insert({
      id: transfer, account_id: account, command_id: 'c-transfer', type: 'external', status: 'executing', amount: '12.5', currency: 'USD', payout_amount: '12.5', payout_currency: 'USD',
      recipient: { email: 'r@example.com' }, partner: 'fiat', estimated_arrival: 'within a minute', created_at: at, updated_at: at,
    });
    await db('processed_commands').insert([
      { command_id: 'c-refused', type: 'transfer.create', reply_status: 422, reply_body: { success: false, error: 'insufficient_funds', message: 'too little', details: 'amount' } },
      { command_id: 'c-transfer', type: 'transfer.create', reply_status: 201, reply_body: { transfer_id: transfer, amount: '12.50' } },
      { command_id: 'c-faucet', type: 'faucet.credit', reply_status: 201,
        reply_body: { id: 'e1', account_id: account, currency: 'USD', amount: '5.00', balance: { currency: 'USD', available: '5.00', pending: '0.00' } } },
    ]);

    await db.migrate.up(outcomesMigration);
    const rows = await db.raw(`SELECT command_id, outcome::text AS outcome FROM processed_commands ORDER BY command_id`);
    const outcomes = Object.fromEntries(rows.rows.map((r: { command_id: string; outcome: string }) => [r.command_id, parseOutcome(r.outcome)]));
    assert.deepEqual(outcomes['c-refused'], { kind: 'refused', code: 'insufficient_funds', message: 'too little', field: 'amount' });
    assert.deepEqual(outcomes['c-faucet'], { kind: 'faucet_credit', entry_id: 'e1', account_id: account, currency: 'USD', amount: '5.00', available: '5.00', pending: '0.00' });
    const accepted = outcomes['c-transfer'];
    assert.equal(accepted.kind, 'transfer');
    assert.ok(accepted.kind === 'transfer' && accepted.created);
    if (accepted.kind !== 'transfer') return;
    const view = transferView(accepted.transfer);
    assert.deepEqual([view.transfer_id, view.status, view.amount, view.created_at, view.completed_at], [transfer, 'executing', '12.50', at, null]);

    await db.migrate.down(outcomesMigration);
    const back = await db('processed_commands').where('command_id', 'c-refused').first();
    assert.deepEqual([back.reply_status, back.reply_body.error, back.reply_body.details], [422, 'insufficient_funds', 'amount']);
    const faucet = await db('processed_commands').where('command_id', 'c-faucet').first();
    assert.deepEqual([faucet.reply_status, faucet.reply_body.id, faucet.reply_body.balance.available], [201, 'e1', '5.00']);
    await db.migrate.latest(migrationConfig());
    const again = await db.raw(`SELECT outcome::text AS outcome FROM processed_commands WHERE command_id = 'c-faucet'`);
    assert.deepEqual(parseOutcome(again.rows[0].outcome), outcomes['c-faucet'], 'down and up again keep the outcome');
  });
});
