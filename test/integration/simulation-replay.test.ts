// The simulation replays what it traced: a short run of a seed (its own processes on the stack)
// writes a trace whose operations are the seed's, client by client; the trace sent again on new
// accounts (`--replay`) names the first answer that differs, here one the test changed in the
// trace, so the replay must have sent the same requests in the same order up to it, with the
// service's new ids in place of the traced ones. A second run of the seed draws the same
// operations, client by client (the clock client's too), and ends with its exact model (the
// accounts on test clocks, whose every outcome the seed decides) in the same state, to the cent.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clientOps, type Op } from '../simulation/plan';
import { readTrace, type TraceLine } from '../simulation/trace';
import type { ClockSnapshot } from '../simulation/clock-model';

const RUN = path.join(__dirname, '..', 'simulation', 'run.js');
const SEED = 21;
const CLIENTS = 2;

function simulate(cwd: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [RUN, ...args], { cwd, env: { ...process.env, LOG_LEVEL: 'error' }, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 2) : 0, output: `${stdout}${stderr}` });
    });
  });
}

const RUN_ARGS = ['--seed', String(SEED), '--ops', '200', '--clients', String(CLIENTS), '--faults', 'off'];

/** What a run of the seed leaves: its trace's lines and its exact model's end state. */
interface RunResult { lines: TraceLine[]; clocks: ClockSnapshot }

async function runSeed(dir: string): Promise<RunResult> {
  const run = await simulate(dir, RUN_ARGS);
  assert.equal(run.code, 0, run.output.slice(-3_000));
  assert.match(run.output, /every check passed \(\d+ checks, 200 operations/);
  const state = JSON.parse(fs.readFileSync(path.join(dir, '.simulation', `model-seed-${SEED}.json`), 'utf8'));
  return { lines: readTrace(path.join(dir, '.simulation', `trace-seed-${SEED}.jsonl`)), clocks: state.clocks };
}

/** The operations each client (the clock client last) drew, in its order. */
const opsByClient = (lines: TraceLine[]): Map<number, unknown[]> => {
  const byClient = new Map<number, unknown[]>();
  for (const l of lines) {
    if (l.t !== 'op') continue;
    if (!byClient.has(l.client)) byClient.set(l.client, []);
    byClient.get(l.client)!.push(l.op);
  }
  return byClient;
};

describe('the simulation trace and its replay @system', function () {
  this.timeout(900_000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simulation-'));
  const again = fs.mkdtempSync(path.join(os.tmpdir(), 'simulation-'));
  const traceFile = path.join(dir, '.simulation', `trace-seed-${SEED}.jsonl`);
  let first: RunResult;
  before(async () => { first = await runSeed(dir); });
  after(() => { for (const d of [dir, again]) fs.rmSync(d, { recursive: true, force: true }); });

  it("a run traces the seed's operations and every request; its replay names the first answer that differs from the trace", async () => {
    const { lines } = first;
    assert.deepEqual(lines[0], { t: 'run', seed: SEED, clients: CLIENTS });

    // The operations, client by client, are the seed's: the first 100 of each client's stream.
    for (let client = 0; client < CLIENTS; client++) {
      const traced = lines.flatMap((l) => (l.t === 'op' && l.client === client ? [l.op] : []));
      const stream = clientOps(SEED, client, CLIENTS);
      const seeded: Op[] = Array.from({ length: 100 }, () => stream.next().value);
      assert.deepEqual(traced, seeded, `client ${client}`);
    }
    const requests = lines.filter((l): l is Extract<TraceLine, { t: 'req' }> => l.t === 'req');
    const answered = new Set(lines.flatMap((l) => (l.t === 'ans' ? [l.seq] : [])));
    assert.ok(requests.length >= 200, `${requests.length} requests`);
    assert.ok(requests.every((r) => answered.has(r.seq)), 'every request answered or failed in the trace');
    assert.ok(requests.some((r) => r.path.includes('⟪')), "ids the service made are named, not written as this run's");

    // Change one answer: the first final answer of a write made in the middle of the run.
    const target = requests.filter((r) => r.key !== null)[Math.floor(requests.filter((r) => r.key !== null).length / 2)];
    const changed = lines.map((l) => (l.t === 'ans' && l.seq === target.seq ? { ...l, status: 409, error: 'changed_in_the_trace' } : l));
    fs.writeFileSync(traceFile, `${changed.map((l) => JSON.stringify(l)).join('\n')}\n`);

    const replayed = await simulate(dir, ['--replay', traceFile]);
    assert.equal(replayed.code, 1, replayed.output.slice(-3_000));
    assert.match(replayed.output, new RegExp(`replay of .*: ${requests.length} requests of ${CLIENTS} clients, seed ${SEED}`));
    const differences = fs.readFileSync(traceFile.replace(/\.jsonl$/, '.differences.txt'), 'utf8').split('\n').filter(Boolean);
    // The changed answer is among the differences, and every other one is a race the trace cannot
    // order or follows from an earlier difference; with two clients and no faults, few do.
    const mine = differences.find((d) => d.startsWith(`request ${target.seq} (`));
    assert.ok(mine?.includes('traced 409 changed_in_the_trace'), differences.join('\n'));
    assert.ok(differences.length <= 1 + Math.ceil(requests.length / 10), differences.join('\n'));
    assert.ok(!differences.some((d) => d.includes('unbound')), `every traced id bound in the replay:\n${differences.join('\n')}`);
  });

  it('a second run of the seed draws the same operations and ends with its exact model in the same state', async () => {
    const second = await runSeed(again);
    const [one, two] = [opsByClient(first.lines), opsByClient(second.lines)];
    assert.equal(one.size, CLIENTS + 1, 'the wall clients and the clock client');
    assert.deepEqual(two, one);
    // The accounts on test clocks: every hold, quote, schedule run and balance, to the cent.
    const { clocks } = first;
    assert.ok(clocks.holds.length + clocks.quotes.length + clocks.schedules.length > 0 && Object.keys(clocks.balances).length > 0, JSON.stringify(clocks));
    assert.deepEqual(second.clocks, clocks);
  });
});
