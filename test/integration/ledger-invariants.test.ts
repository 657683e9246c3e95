// The ledger under real load (DESIGN.md sections 3 and 4): randomized concurrent transfers among
// 50 accounts with failures asked of the rail mixed in, then the invariants. Run with one ledger process,
// with two, and with the ledger process killed (SIGKILL) mid-run and restarted.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { restartLedger } from '../support/service';
import type { RunningRole } from '../../src/runtime';
import { testService } from '../hooks';
import type { SignedUp } from '../support/accounts';
import { eventually } from '../support/http';
import { Money } from '../../ledger/money';
import { fund } from '../support/money';
import { expectedHoldings, linkGroup, mixedLoad } from '../support/mixed-load';
import { accountEventIds, collectEvents, type CollectedEvents, fundGroup, signUpGroup, transferLoad, violations, waitAllTerminal } from '../support/load';

const GROUP_SIZE = 50;
const TRANSFERS = 2_000;
const MIXED_OPERATIONS = 1_200;
const CONCURRENCY = 48;

/** A ledger process of its own, on the test run's database and topics. */
function startLedgerProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'src', 'main.js')], {
    env: { ...process.env, ROLES: 'ledger', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`ledger process did not start: ${output.slice(-2000)}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"msg":"service started"')) { clearTimeout(timer); resolve(child); }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`ledger process exited with ${code}: ${output.slice(-2000)}`)); });
  });
}

function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => { child.once('exit', () => resolve()); child.kill(signal); });
}

async function assertLedgerInvariants(group: SignedUp[], acknowledged: string[], streams: CollectedEvents[]): Promise<void> {
  const { runtime } = testService();
  const db = runtime.db;
  await waitAllTerminal(db, acknowledged);
  assert.deepEqual(await violations(db), {});

  assert.equal(new Set(acknowledged).size, acknowledged.length, 'no transfer was acknowledged twice');
  const ids = group.map((m) => m.account.id);
  const { rows: transfers } = await db.raw('SELECT id FROM transfers WHERE account_id = ANY(?::uuid[])', [ids]);
  assert.deepEqual(transfers.map((r: { id: string }) => r.id).sort(), [...acknowledged].sort(), 'every acknowledged transfer exists exactly once, and no other');

  const { rows: [money] } = await db.raw(
    `SELECT coalesce(sum(balance), 0)::text AS total, coalesce(sum(balance) FILTER (WHERE kind = 'pending'), 0)::text AS held
     FROM ledger_accounts WHERE account_id = ANY(?::uuid[]) AND currency = 'USD'`, [ids]);
  assert.equal(money.held, '0.000000', 'nothing stays held once every transfer is final');
  assert.equal(money.total, `${GROUP_SIZE * 1000}.000000`, 'the group holds exactly what the faucet gave it');

  // Every event of every account reached that account's stream.
  await eventually(async () => {
    for (let i = 0; i < group.length; i++) {
      const expected = await accountEventIds(db, group[i].account.id);
      const missing = expected.filter((id) => !streams[i].ids.has(id));
      if (missing.length > 0) throw new Error(`account ${i} is missing ${missing.length} of ${expected.length} events`);
    }
    return true;
  }, 30_000, 'every event on its account stream');
  // Each stream, over all its reconnections, delivered the account's events once each, in order.
  for (const stream of streams) assert.deepEqual(stream.seqs, stream.seqs.map((_, i) => i + 1));
  assert.ok(streams.filter((s) => s.connections > 3).length >= group.length / 4, 'the reconnecting half did reconnect, again and again');
}

describe('ledger invariants under load @system', function () {
  this.timeout(300_000);
  let group: SignedUp[] = [];
  let streams: CollectedEvents[] = [];
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    const { baseUrl } = testService();
    group = await signUpGroup(baseUrl, GROUP_SIZE);
    // Streams open before the first event, so each must deliver every event of its account.
    // Half of them reconnect with Last-Event-ID every 300 ms throughout, as clients behind flaky links would.
    streams = await Promise.all(group.map((member, i) => collectEvents(baseUrl, member.token, i % 2 === 0 ? 300 : undefined)));
    await fundGroup(baseUrl, group, '1000.00');
  });
  afterEach(async () => {
    streams.forEach((s) => s.close());
    while (children.length) await stopProcess(children.pop()!, 'SIGTERM');
  });

  it(`keeps every invariant through ${TRANSFERS} concurrent transfers among ${GROUP_SIZE} accounts`, async () => {
    const { acknowledged, refused } = await transferLoad(testService().baseUrl, group, TRANSFERS, CONCURRENCY, 1);
    assert.ok(acknowledged.length > TRANSFERS / 2, `most transfers are accepted (refused: ${JSON.stringify([...refused])})`);
    await assertLedgerInvariants(group, acknowledged, streams);
  });

  it('gives the same guarantees with two ledger processes in the consumer group', async () => {
    children.push(await startLedgerProcess());
    const { acknowledged } = await transferLoad(testService().baseUrl, group, TRANSFERS, CONCURRENCY, 2);
    await assertLedgerInvariants(group, acknowledged, streams);
  });

  it('keeps every invariant, with two ledger processes, through a random mix of transfers, conversions and payments', async () => {
    const { baseUrl, runtime } = testService();
    children.push(await startLedgerProcess());
    await Promise.all(group.map((member) => fund(baseUrl, member.key, 'EUR', '1000.00')));
    const linked = await linkGroup(baseUrl, group);
    const result = await mixedLoad(baseUrl, linked, MIXED_OPERATIONS, CONCURRENCY, 4);
    assert.ok(result.payments.length > MIXED_OPERATIONS / 8 && result.conversions > MIXED_OPERATIONS / 8 && result.transfers.length > MIXED_OPERATIONS / 4,
      `each kind is well represented: ${result.transfers.length} transfers, ${result.conversions} conversions, ${result.payments.length} payments, refused ${JSON.stringify([...result.refused])}`);
    await waitAllTerminal(runtime.db, result.transfers);
    const expected = await expectedHoldings(runtime.db, group, { USD: new Money(GROUP_SIZE * 1000), EUR: new Money(GROUP_SIZE * 1000) });
    assert.deepEqual(await violations(runtime.db), {});
    const { rows } = await runtime.db.raw(
      `SELECT currency, sum(balance)::text AS total, sum(balance) FILTER (WHERE kind = 'pending')::text AS held
       FROM ledger_accounts WHERE account_id = ANY(?::uuid[]) GROUP BY currency ORDER BY currency`, [group.map((m) => m.account.id)]);
    assert.deepEqual(Object.fromEntries(rows.map((r: { currency: string; total: string }) => [r.currency, new Money(r.total).toFixed(6)])), expected,
      'each currency holds its funding, plus completed pay-ins and conversions in, less completed payouts and conversions out');
    assert.ok(rows.every((r: { held: string | null }) => r.held === null || new Money(r.held).isZero()), 'nothing stays held once everything has ended');
  });

  it('loses and doubles nothing when the ledger process is killed mid-run and restarted', async () => {
    const service = testService();
    const inProcess = service.roles.findIndex((r) => r.role === 'ledger');
    await service.roles[inProcess].stop();
    try {
      const first = await startLedgerProcess();
      children.push(first);
      const load = transferLoad(service.baseUrl, group, TRANSFERS, CONCURRENCY, 3);
      await eventually(async () => {
        const { rows } = await service.runtime.db.raw('SELECT count(*)::int AS n FROM transfers WHERE account_id = ANY(?::uuid[])', [group.map((m) => m.account.id)]);
        return rows[0].n >= TRANSFERS / 4 ? true : undefined;
      }, 60_000, 'a quarter of the load');
      await stopProcess(first, 'SIGKILL');
      children.push(await startLedgerProcess());
      const { acknowledged } = await load;
      await assertLedgerInvariants(group, acknowledged, streams);
    } finally {
      const restarted: RunningRole = await restartLedger(service);
      service.roles[inProcess] = restarted;
    }
  });
});
