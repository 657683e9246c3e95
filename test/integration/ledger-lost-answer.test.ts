// A ledger round whose client goes silent, and a connection whose answer was lost, against the real
// Postgres. A link that breaks mid-round can leave both ends waiting: the server with the round's
// transaction open and its ledger accounts locked, the client (node-postgres) with a query that
// will never be answered, its next statements queued behind it. Before, such a round held its
// locks until TCP gave up (hours) and every round touching the same accounts failed meanwhile
// (the simulation, seed 12: openbank's settlement account locked for 16 minutes after a stall of
// the ledger's link to Postgres), and the connection went back to the pool to wedge the next user.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { available } from '../../ledger/chart';
import { LedgerRound } from '../../ledger/store/round-transaction';
import { createDb, type Db } from '../../src/db';
import { isTransient } from '../../src/transient';
import { db } from '../hooks';
import { ensureSettlementAccounts, insertAccount } from '../support/seed-ledger';
import { TcpProxy } from '../support/tcp-proxy';

const IDLE_TIMEOUT_MS = 1_000;

/** A new account and its available USD ledger account, as a round locks it. */
async function lockableAccount(): Promise<{ code: string; accountId: string }> {
  const accountId = await insertAccount(db(), 'lost-answer');
  await db().transaction((trx) => ensureSettlementAccounts(trx, accountId));
  return { code: available(accountId, 'USD').code, accountId };
}

/** How long another transaction waits to lock the ledger account `code` (a lock_timeout of 10 s fails it). */
async function msToLock(code: string): Promise<number> {
  const started = Date.now();
  await db().transaction(async (trx) => {
    await trx.raw('SET LOCAL lock_timeout = 10000');
    await trx.raw('SELECT balance FROM ledger_accounts WHERE code = ? FOR UPDATE', [code]);
  });
  return Date.now() - started;
}

describe('a ledger round whose client is gone, and a connection whose answer was lost', function () {
  this.timeout(60_000);

  it('frees the round\'s locks within its idle bound when its client goes silent mid-round, and the round then fails as transient, nothing kept', async () => {
    const { code, accountId } = await lockableAccount();
    const ref = { code, accountId, kind: 'available' as const, currency: 'USD' as const };
    let resume!: () => void;
    const silent = new Promise<void>((resolve) => { resume = resolve; });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => { locked = resolve; });
    const round = LedgerRound.run(db(), async (r) => {
      await r.lock({ refs: [ref], alertAccountIds: [] });
      locked();
      await silent; // the client stops talking: the transaction open, the account locked
      await r.lock({ refs: [ref], alertAccountIds: [] });
      return 'went on';
    }, undefined, IDLE_TIMEOUT_MS).catch((error: unknown) => error);
    await lockTaken;

    let waited: number;
    try {
      waited = await msToLock(code);
    } finally {
      resume();
    }
    assert.ok(waited >= IDLE_TIMEOUT_MS * 0.8 && waited < 10_000, `the lock was free after ${waited} ms`);
    const outcome = await round;
    assert.notEqual(outcome, 'went on', 'the round did not go on in a transaction the server ended');
    assert.ok(isTransient(outcome), `retried as transient: ${String(outcome)}`);

    // The pool hands out a working connection after it, and a round under the default bound goes through.
    const balances = await LedgerRound.run(db(), async (r) => (await r.lock({ refs: [ref], alertAccountIds: [] })).balances.map((b) => [b.ref.code, b.balance.toFixed(2)]));
    assert.deepEqual(balances, [[code, '0.00']]);
  });

  describe('through a link that loses an answer', () => {
    let proxy: TcpProxy;
    let proxied: Db;

    before(async () => {
      const url = new URL(process.env.DATABASE_URL!);
      proxy = await TcpProxy.start(url.hostname, Number(url.port || 5432));
      url.port = String(proxy.port);
      proxied = createDb(url.toString(), 2);
    });
    after(async () => {
      await proxied?.destroy();
      await proxy?.stop();
    });

    it('closes a connection whose answer never came rather than hand it out again, and ends its session and locks on the server', async () => {
      const { code } = await lockableAccount();
      const client = await proxied.client.acquireConnection() as pg.Client;
      const backend: number = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await client.query('BEGIN');
      await client.query('SELECT balance FROM ledger_accounts WHERE code = $1 FOR UPDATE', [code]);
      // The answer to the next statement is lost on the way (the request arrives; its reply never does).
      proxy.dropReplies = true;
      await assert.rejects(client.query({ text: 'SELECT 1', query_timeout: 300 } as pg.QueryConfig), /Query read timeout/);
      proxy.dropReplies = false;
      await proxied.client.releaseConnection(client);

      // The next user of the pool gets a connection that answers, not the one left mid-exchange.
      const answered = await Promise.race([proxied.raw('SELECT pg_backend_pid() AS pid').then((r) => r.rows[0].pid as number), sleep(5_000).then(() => 'no answer')]);
      assert.equal(typeof answered, 'number', `the pool's next connection answers: ${answered}`);
      assert.notEqual(answered, backend, 'a new session, not the one left mid-exchange');
      // Closed, the old session ends on the server with its transaction: the account is free again.
      assert.ok(await msToLock(code) < 5_000);
      const gone = await db().raw('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ?', [backend]);
      assert.equal(gone.rows[0].n, 0, 'the old session is gone');
    });
  });
});
