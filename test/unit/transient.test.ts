// What the consumers retry (src/transient.ts) rather than refuse or dead-letter: a failure of the
// moment, a timeout among them; and what they do not: a command that is wrong whenever it runs.
import assert from 'node:assert/strict';
import net from 'node:net';
import { createDb } from '../../src/db';
import { unavailableDependency } from '../../src/http/unavailable';
import { isTransient } from '../../src/transient';

const pgError = (code: string, message = 'pg error') => Object.assign(new Error(message), { code });

describe('transient failures', () => {
  it('takes a statement that timed out on the server or in the client for a failure of the moment', () => {
    assert.equal(isTransient(pgError('57014', 'canceling statement due to statement timeout')), true);
    assert.equal(isTransient(new Error('Query read timeout')), true);
  });

  it('takes lock conflicts, lost connections and a restarting server for failures of the moment', () => {
    for (const code of ['40001', '40P01', '55P03', '57P01', '53300', '08006', 'ECONNRESET']) assert.equal(isTransient(pgError(code)), true, code);
    assert.equal(isTransient(new Error('Connection terminated unexpectedly')), true);
  });

  it('takes a round the server ended for waiting too long between its statements, and the connection it closed, for failures of the moment', () => {
    assert.equal(isTransient(pgError('25P03', 'terminating connection due to idle-in-transaction timeout')), true);
    assert.equal(isTransient(new Error('Client has encountered a connection error and is not queryable')), true);
    assert.equal(isTransient(new Error('Client was closed and is not queryable')), true);
  });

  it('takes a Postgres that accepts and never answers (stopped, stalled) for one away: retried, and 503 naming it on a route', async function () {
    this.timeout(10_000);
    // A server that takes the connection and says nothing, as a stopped Postgres's kernel does.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const db = createDb(`postgres://payments:payments@127.0.0.1:${(silent.address() as net.AddressInfo).port}/payments`);
    try {
      const error = await db.raw('SELECT 1').then(() => null, (e: unknown) => e);
      assert.ok(error instanceof Error, 'the query fails');
      assert.equal(isTransient(error), true, error.message);
      assert.equal(unavailableDependency(error), 'postgres', error.message);
    } finally {
      await db.destroy();
      silent.close();
    }
  });

  it('does not retry a command that breaks a rule whenever it runs', () => {
    for (const code of ['23505', '23514', '22P02', '42P01']) assert.equal(isTransient(pgError(code)), false, code);
    assert.equal(isTransient(new Error('insufficient funds')), false);
    assert.equal(isTransient(new Error('the quote\'s timeout expired')), false);
    assert.equal(isTransient(null), false);
  });
});
