// A ledger round whose write waits past its statement timeout, against the real Postgres: the
// server cancels the write, and the COMMIT, sent only after a write that succeeded, is never sent,
// so the handler's failure is the whole truth. Before, the client stopped waiting (its query
// timeout) while the server went on, and committed the round once the lock it waited on was free:
// a round reported failed was kept, and its clients got replays instead of their 201.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { handleLedgerBatch, type LedgerState } from '../../consumers/ledger/handler';
import { postgresLedgerStore } from '../../ledger/store/postgres';
import { RoundPublisher } from '../../consumers/ledger/publisher';
import { ReplySender } from '../../consumers/ledger/replies';
import { available } from '../../ledger/chart';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { Money } from '../../ledger/money';
import type { Delivered } from '../../src/kafka/consumer';
import { db, testService } from '../hooks';
import { insertAccount } from '../support/seed-ledger';

const runtime = () => testService().runtime;
const STATEMENT_TIMEOUT_MS = 1_000;

const newAccount = (): Promise<string> => insertAccount(db(), 'round-timeout');

/** A faucet credit as delivered from ledger.commands. */
function faucet(accountId: string, amount: string): Delivered<LedgerCommandEnvelope> {
  const value: LedgerCommandEnvelope = {
    id: `faucet:${randomUUID()}`, type: 'faucet.credit', account_id: accountId, reply_to: null, issued_at: new Date().toISOString(),
    payload: JSON.stringify({ entry_id: randomUUID(), currency: 'USD', amount }),
  };
  return { key: accountId, value, partition: 0, offset: '0', timestamp: String(Date.now()) };
}

async function balance(accountId: string): Promise<string> {
  const row = await db()('ledger_accounts').where('code', available(accountId, 'USD').code).first('balance');
  return new Money(row.balance).toFixed(2);
}

describe('ledger round past its statement timeout', function () {
  this.timeout(90_000);
  let state: LedgerState;

  before(async () => {
    state = { store: postgresLedgerStore(runtime().db), publisher: await RoundPublisher.start(runtime()), replies: new ReplySender(runtime()), statementTimeoutMs: STATEMENT_TIMEOUT_MS };
  });
  after(async () => {
    await state?.publisher.stop();
  });

  it('is cancelled by Postgres before its COMMIT: the handler fails at once, nothing of the round is kept, and the command is decided afresh', async () => {
    const accountId = await newAccount();
    await handleLedgerBatch(runtime(), state, [faucet(accountId, '10.00')]);
    assert.equal(await balance(accountId), '10.00');

    // Another transaction holds the account's event counter, which the round's write takes.
    const blocker = await db().transaction();
    await blocker.raw('SELECT last_seq FROM account_event_sequences WHERE account_id = ? FOR UPDATE', [accountId]);
    const command = faucet(accountId, '5.00');
    const started = Date.now();
    try {
      const outcome = await Promise.race([
        handleLedgerBatch(runtime(), state, [command]).then(() => 'committed', (error: unknown) => error),
        sleep(10_000).then(() => 'still waiting'),
      ]);
      assert.equal((outcome as { code?: string }).code, '57014', `the handler fails with the statement timeout, got ${String(outcome)}`);
      assert.ok(Date.now() - started < 10_000);
    } finally {
      await blocker.rollback();
    }

    // The counter is free again: a write still waiting on the server would commit now.
    await sleep(1_000);
    const { entry_id: entryId } = JSON.parse(command.value.payload) as { entry_id: string };
    assert.equal(await db()('processed_commands').where('command_id', command.value.id).first(), undefined, 'the command is not recorded as decided');
    assert.equal(await db()('journal_entries').where('id', entryId).first(), undefined, 'its entry is not written');
    assert.equal(await balance(accountId), '10.00');

    // Redelivered, the command is decided now, not answered as a replay of a round that failed.
    await handleLedgerBatch(runtime(), state, [command]);
    const decided = await db()('processed_commands').where('command_id', command.value.id).first();
    assert.equal(decided?.type, 'faucet.credit');
    assert.equal(await balance(accountId), '15.00');
  });
});
