// The simulation's replay rests on three things, each checked here without the service: a seed
// gives the same keys, operations and fault schedule (placed in operations, not seconds); the
// trace names the service's ids so a replay binds them to its own run's ids by their place in the
// answers; and the command line bounds a run by its operations, with minutes as a guard.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { opsOfClient, parseArgs } from '../simulation/args';
import { KeySource } from '../simulation/keys';
import { clientOps, faultSchedule, NOMINAL_OPS_PER_S, streamSeed } from '../simulation/plan';
import { Names, readTrace, Trace } from '../simulation/trace';
import type { Member } from '../simulation/world';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const take = <T>(next: () => T, n: number): T[] => Array.from({ length: n }, next);

describe('simulation trace and replay', () => {
  it('a seed gives each client the same keys, version-4 UUIDs, and other seeds or clients other keys', () => {
    const keys = (seed: number, client: number) => { const source = new KeySource(streamSeed(seed, 2000 + client)); return take(() => source.uuid(), 500); };
    const a = keys(7, 0);
    assert.deepEqual(a, keys(7, 0));
    assert.ok(a.every((k) => V4.test(k)), a.find((k) => !V4.test(k)));
    assert.equal(new Set(a).size, a.length, 'no key drawn twice');
    assert.equal(new Set([...a, ...keys(7, 1), ...keys(8, 0)]).size, 1_500);
  });

  it('two runs of a seed draw the same stream of operations, client by client', () => {
    for (let client = 0; client < 6; client++) {
      const one = clientOps(11, client, 6);
      const two = clientOps(11, client, 6);
      assert.deepEqual(take(() => one.next().value, 1_000), take(() => two.next().value, 1_000), `client ${client}`);
    }
  });

  it('faults are placed in operations at the nominal pace, in order, and the same for a seed', () => {
    const schedule = faultSchedule(7, (6_000 * 1_000) / NOMINAL_OPS_PER_S, 'on');
    assert.deepEqual(schedule, faultSchedule(7, (6_000 * 1_000) / NOMINAL_OPS_PER_S, 'on'));
    assert.ok(schedule.length >= 4, `${schedule.length} faults`);
    assert.ok(schedule.every((f, i) => Number.isInteger(f.atOp) && f.atOp > 0 && f.atOp < 6_000 && (i === 0 || f.atOp >= schedule[i - 1].atOp)));
    // With servers on, some are paused rather than killed (over a long schedule).
    const long = faultSchedule(3, 3_600_000, 'on');
    assert.ok(long.some((f) => ['kafka', 'redis', 'postgres'].includes(f.target) && f.action === 'stop'), 'a server paused');
    assert.ok(long.some((f) => ['kafka', 'redis', 'postgres'].includes(f.target) && f.action === 'kill'), 'a server killed');
    for (const action of ['partition', 'stall']) {
      for (const target of ['api_kafka', 'ledger_postgres']) assert.ok(long.some((f) => f.target === target && f.action === action), `${target} ${action}`);
    }
    assert.ok(long.some((f) => f.target === 'ledger2') && long.some((f) => f.target === 'ledger'), 'each of the two ledgers');
  });

  it("the trace names the service's ids, and a replay binds the names to its own run's ids by their place", () => {
    const recorded = new Names();
    const member = { index: 0, accountId: '11111111-1111-4111-8111-111111111111', customerId: '22222222-2222-4222-8222-222222222222', webhookId: '33333333-3333-4333-8333-333333333333', email: 'a-1@example.test', vibans: [{ id: '44444444-4444-4444-8444-444444444444', account_number: '9876543210' }] } as unknown as Member;
    recorded.bindMember(member);
    const transfer = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    const answer = recorded.write(JSON.stringify({ transfer_id: transfer, sender: member.accountId, items: [{ id: transfer }] }), true);
    assert.equal(answer, '{"transfer_id":"⟪id1⟫","sender":"⟪c0.account⟫","items":[{"id":"⟪id1⟫"}]}');
    // A request names known ids in every legal form, and the set-up's values; a key (unknown) stays as sent.
    const key = 'deadbeef-0000-4000-8000-000000000000';
    const upper = recorded.write(`/v1/transfers/${transfer.toUpperCase()}`, false);
    assert.equal(upper, '/v1/transfers/⟪id1:U⟫');
    const body = recorded.write(JSON.stringify({ recipient_email: 'a-1@example.test', account_number: '9876543210', quote_id: key }), false);
    assert.equal(body, `{"recipient_email":"⟪c0.email⟫","account_number":"⟪c0.viban0.number⟫","quote_id":"${key}"}`);

    // The replay: other accounts, another transfer id, bound from its answer at the same place.
    const replayed = new Names();
    const again = { ...member, accountId: '55555555-5555-4555-8555-555555555555', email: 'b-2@example.test', vibans: [{ id: '66666666-6666-4666-8666-666666666666', account_number: '1234567890' }] } as unknown as Member;
    replayed.bindMember(again);
    assert.throws(() => replayed.read(upper), /⟪id1⟫/);
    const newTransfer = '77777777-8888-4999-8aaa-bbbbbbbbbbbb';
    replayed.learnFrom(JSON.parse(answer), { transfer_id: newTransfer, sender: again.accountId, items: [{ id: newTransfer }] });
    assert.equal(replayed.read(upper), `/v1/transfers/${newTransfer.toUpperCase()}`);
    assert.deepEqual(JSON.parse(replayed.read(body)), { recipient_email: 'b-2@example.test', account_number: '1234567890', quote_id: key });
  });

  it('writes what it is told in order once on, and reads back what it wrote', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'trace-')), 'trace-seed-3.jsonl');
    const member = { index: 0, key: 'sk_sandbox_x', accountId: '11111111-1111-4111-8111-111111111111' } as unknown as Member;
    const trace = new Trace(file, new Names(), () => [member]);
    trace.header(3, 2);
    assert.equal(trace.request(0, 'POST', '/v1/customers', {}, 'k0', 'sk_sandbox_x', null), 0, 'nothing traced before it is on (the set-up)');
    trace.on = true;
    trace.op(0, { kind: 'link', partner: 'fiat' });
    const seq = trace.request(0, 'GET', '/v1/transfers/x', undefined, undefined, 'session-token', 'decline');
    trace.answer(seq, { status: 404, body: { success: false, error: 'not_found' }, retryAfter: null });
    trace.answer(trace.request(0, 'POST', '/v1/transfers', { a: 1 }, 'k1', 'sk_sandbox_x', null), 'timeout');
    await trace.close();
    const lines = readTrace(file);
    assert.deepEqual(lines.map((l) => l.t), ['run', 'op', 'req', 'ans', 'req', 'ans']);
    assert.deepEqual(lines[0], { t: 'run', seed: 3, clients: 2 });
    assert.deepEqual(lines[2], { t: 'req', seq: 1, client: 0, method: 'GET', path: '/v1/transfers/x', body: null, key: null, auth: 'session', scenario: 'decline' });
    assert.deepEqual(lines[3], { t: 'ans', seq: 1, status: 404, error: 'not_found', body: '{"success":false,"error":"not_found"}' });
    assert.deepEqual(lines[5], { t: 'ans', seq: 2, status: 'timeout', error: null, body: null });
  });

  it('a run is bounded by its operations, shared among the clients, with minutes as a guard', () => {
    const short = parseArgs(['--short']);
    assert.deepEqual({ seed: short.seed, ops: short.ops, clients: short.clients, faults: short.faults }, { seed: 7, ops: 6_000, clients: 6, faults: 'on' });
    assert.ok(short.minutes >= 5, `guard ${short.minutes} min`);
    assert.equal(parseArgs(['--seed', '3']).faults, 'on', 'faults of every kind by default');
    assert.equal(parseArgs(['--seed', '3', '--minutes', '10']).ops, null, 'minutes alone bound the run');
    assert.equal(parseArgs(['--seed', '3', '--ops', '100', '--minutes', '1']).minutes, 1);
    assert.equal(parseArgs(['--replay', 'x.jsonl']).replay, 'x.jsonl');
    assert.throws(() => parseArgs(['--ops', '0']), /--ops/);
    for (const [ops, clients] of [[6_000, 6], [7, 3], [1, 4], [1_001, 8]]) {
      const shares = Array.from({ length: clients }, (_, i) => opsOfClient(ops, clients, i));
      assert.equal(shares.reduce((a, b) => a + b, 0), ops);
      assert.ok(Math.max(...shares) - Math.min(...shares) <= 1);
    }
  });
});
