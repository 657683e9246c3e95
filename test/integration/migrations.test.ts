// Every migration runs up and down cleanly, on a database of its own.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parseOutcome } from '../../ledger/outcome';
import { transferView } from '../../src/ledger-client/answers';
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

  it('names the wallet a capture of a hold on it paid from, for captures made before transfers named one, and forgets it on the way down', async () => {
    const sourceWallets = { ...migrationConfig(), name: '20261129170000_transfer_source_wallets.js' };
    await db.migrate.latest(migrationConfig());
    await db.migrate.down(sourceWallets);
    const account = randomUUID();
    const wallet = randomUUID();
    const [fromWallet, fromMain, plain] = [randomUUID(), randomUUID(), randomUUID()];
    const at = '2026-11-29T10:00:00.000Z';
    await db('accounts').insert({ id: account, email: `${account}@example.com`, password_hash: 'x', business_name: 'Old Captures Ltd', country_code: 'GB', environment: 'sandbox' });
    await db('wallets').insert({ id: wallet, account_id: account, name: 'payouts' });
    await db('transfers').insert([fromWallet, fromMain, plain].map((id) => ({
      id, account_id: account, command_id: `c-${id}`, type: 'external', status: 'executing', amount: '5', currency: 'USD', payout_amount: '5', payout_currency: 'USD',
      recipient: { email: 'r@example.com' }, partner: 'fiat', estimated_arrival: 'within a minute', created_at: at, updated_at: at,
    })));
    const capture = (transferId: string) => ({ id: randomUUID(), amount: '5', transfer_id: transferId, recipient_email: 'r@example.com', final: true, created_at: at });
    await db('holds').insert([[wallet, fromWallet], [null, fromMain]].map(([walletId, transferId]) => ({
      id: randomUUID(), account_id: account, wallet_id: walletId, command_id: `h-${transferId}`, status: 'captured', currency: 'USD', amount: '5', captured_amount: '5',
      captures: JSON.stringify([capture(transferId!)]), expires_at: at, created_at: at, updated_at: at,
    })));

    await db.migrate.up(sourceWallets);
    const named = async () => Object.fromEntries((await db('transfers').where('account_id', account).select('id', 'from_wallet_id')).map((r) => [r.id, r.from_wallet_id]));
    assert.deepEqual(await named(), { [fromWallet]: wallet, [fromMain]: null, [plain]: null });
    await db.migrate.down(sourceWallets);
    assert.ok(!(await db.schema.hasColumn('transfers', 'from_wallet_id')));
    await db.migrate.latest(migrationConfig());
    assert.deepEqual(await named(), { [fromWallet]: wallet, [fromMain]: null, [plain]: null }, 'down and up again name it again');
  });

  it('gives the rows made before metadata {} (a transfer, a customer, a contact), indexes transfers, holds and payments that have some, and drops both on the way down', async () => {
    const metadataMigration = { ...migrationConfig(), name: '20261205100000_metadata.js' };
    await db.migrate.latest(migrationConfig());
    await db.migrate.down(metadataMigration);
    const account = randomUUID();
    const [before, after] = [randomUUID(), randomUUID()];
    const at = '2026-12-01T10:00:00.000Z';
    const transfer = (id: string) => ({
      id, account_id: account, command_id: `c-${id}`, type: 'internal', status: 'completed', amount: '5', currency: 'USD', payout_amount: '5', payout_currency: 'USD',
      recipient: { email: 'r@example.com' }, partner: 'book', estimated_arrival: 'instant', created_at: at, updated_at: at,
    });
    await db('accounts').insert({ id: account, email: `${account}@example.com`, password_hash: 'x', business_name: 'Before Metadata Ltd', country_code: 'GB', environment: 'sandbox' });
    await db('transfers').insert(transfer(before));
    await db('customers').insert({ id: randomUUID(), account_id: account, email: 'c@example.com', business_name: 'C', country_code: 'DE' });
    await db('contacts').insert({ id: randomUUID(), account_id: account, name: 'Ada', email: 'ada@example.com' });

    await db.migrate.up(metadataMigration);
    for (const table of ['transfers', 'customers', 'contacts']) {
      assert.deepEqual((await db(table).where('account_id', account).select('metadata')).map((r) => r.metadata), [{}], `${table}: {} for a row made before`);
    }
    await db('transfers').insert({ ...transfer(after), metadata: JSON.stringify({ order_id: 'A-17' }) });
    const indexes = await db.raw(`SELECT indexname, indexdef FROM pg_indexes WHERE indexname IN ('transfers_metadata', 'holds_metadata', 'payments_metadata') ORDER BY 1`);
    assert.deepEqual(indexes.rows.map((r: { indexname: string }) => r.indexname), ['holds_metadata', 'payments_metadata', 'transfers_metadata']);
    for (const { indexdef } of indexes.rows) assert.match(indexdef, /USING gin \(metadata jsonb_path_ops\) WITH \(fastupdate='?off'?\) WHERE \(metadata <> '\{\}'::jsonb\)/);
    const found = await db('transfers').whereRaw(`metadata <> '{}'::jsonb AND metadata @> ?::jsonb`, [JSON.stringify({ order_id: 'A-17' })]).select('id');
    assert.deepEqual(found.map((r) => r.id), [after]);

    await db.migrate.down(metadataMigration);
    for (const table of ['transfers', 'holds', 'payments', 'customers', 'contacts']) assert.ok(!(await db.schema.hasColumn(table, 'metadata')), `${table} has no metadata`);
    await db.migrate.latest(migrationConfig());
    assert.deepEqual((await db('transfers').where('account_id', account).orderBy('command_id').select('id', 'metadata')).map((r) => r.metadata), [{}, {}], 'down and up again: none, as for any row made before');
  });

  it('moves account events to account_events and unpublished rounds to outbox_rounds, and back', async () => {
    const roundsMigration = { ...migrationConfig(), name: '20261124130000_account_events_and_outbox_rounds.js' };
    await db.migrate.latest(migrationConfig());
    await db.migrate.down(roundsMigration);
    const account = randomUUID();
    const [published, unpublished] = [randomUUID(), randomUUID()];
    const event = (seq: number, round: string) => ({
      id: randomUUID(), round_id: round, topic: 'domain.events', message_key: `transfer-${seq}`, account_id: account, account_seq: seq,
      payload: { id: `e${seq}`, type: 'transfer.completed', resource_id: `transfer-${seq}`, account_id: account, account_seq: seq, created_at: '2026-11-20T10:00:00.000Z' },
    });
    const entry = { id: randomUUID(), round_id: unpublished, topic: 'ledger.entries', message_key: 'entry-2', account_id: null, account_seq: null, payload: { id: 'entry-2', kind: 'faucet_credit' } };
    await db('outbox').insert([event(1, published), event(2, unpublished), entry, event(3, unpublished)]);
    await db('outbox_unpublished_rounds').insert({ round_id: unpublished });

    await db.migrate.up(roundsMigration);
    const events = await db('account_events').where('account_id', account).orderBy('account_seq');
    assert.deepEqual(events.map((e) => [Number(e.account_seq), e.payload.id]), [[1, 'e1'], [2, 'e2'], [3, 'e3']], 'every account event is kept, published or not');
    const rounds = await db('outbox_rounds').select('round_id', 'messages', 'events');
    assert.deepEqual(rounds.map((r) => r.round_id), [unpublished], 'only the unpublished round is waiting');
    assert.deepEqual(rounds[0].messages, [{ topic: 'ledger.entries', key: 'entry-2', payload: entry.payload }]);
    assert.deepEqual(rounds[0].events, [[account, 2], [account, 3]]);

    await db.migrate.down(roundsMigration);
    const back = await db('outbox').orderBy('seq').select('topic', 'message_key', 'account_seq', 'round_id');
    assert.deepEqual(back.map((r) => [r.topic, r.message_key, r.account_seq === null ? null : Number(r.account_seq)]).sort(),
      [['domain.events', 'transfer-1', 1], ['domain.events', 'transfer-2', 2], ['domain.events', 'transfer-3', 3], ['ledger.entries', 'entry-2', null]].sort());
    assert.deepEqual((await db('outbox_unpublished_rounds').select('round_id')).map((r) => r.round_id), [unpublished]);
    const waiting = back.filter((r) => r.round_id === unpublished).map((r) => r.message_key).sort();
    assert.deepEqual(waiting, ['entry-2', 'transfer-2', 'transfer-3'], 'the unpublished round has its messages again');
    await db.migrate.latest(migrationConfig());
  });
});
