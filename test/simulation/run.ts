// The whole-service simulation (`npm run simulate -- --seed 7 --ops 6000`; docs in
// ../../../shared/SIMULATION.md and README "Simulation"): the run's own service processes on the
// shared stack, clients sending the seed's operations over every money route, the seed's faults,
// a model checked as answers arrive and, once the system is quiet, against every balance, the
// ledger, the event streams and the webhook receivers. Every request, answer and fault goes to a
// trace (.simulation/trace-seed-N.jsonl) that `--replay` sends again (replay.ts). A failure prints
// the seed, the check and each involved client's last operations, and writes them to
// .simulation/seed-N.json.
import fs from 'node:fs';
import path from 'node:path';
import { createDb } from '../../src/db';
import { alertChecks, alertSummary } from './alert-ops';
import { opsOfClient, parseArgs } from './args';
import { batchChecks, batchSummary } from './batch-ops';
import { endEverything, finalChecks, learnEverything, quiet, stillOpen } from './checks';
import { runOp } from './clients';
import { eventsAsModelled, kafkaEventsAgree } from './event-checks';
import { runFaults, type FaultLog } from './faults';
import { Findings } from './findings';
import { P99_FACTOR, P99_FLOOR_MS } from './latency';
import { holdChecks, readDoubtful, voidLeftHolds, walletBalanceChecks, walletSummary } from './hold-checks';
import { clientOps, faultSchedule, NOMINAL_OPS_PER_S, type Op } from './plan';
import { replay } from './replay';
import { createWorld, killStage, LOG_DIR, names, setUp, startStage, stopStage } from './stage';
import { Names, Trace } from './trace';
import type { Member, World } from './world';
import { metadataChecks } from './metadata-checks';
import { clockFinalChecks, clockSummary, voidClockHolds } from './clock-checks';
import { clockClient } from './clock-ops';
import { clockOps, clockOpsOf, clockPlan } from './clock-plan';
import { bindClocks } from './clock-stage';

const settings = parseArgs(process.argv.slice(2));
const traceFile = path.join(process.cwd(), '.simulation', `trace-seed-${settings.seed}.jsonl`);

/** One client's share of the operations, each begun in the trace before it is sent; stops early at `until`. */
async function client(world: World, member: Member, count: number, until: number, trace: Trace): Promise<void> {
  const ops = clientOps(settings.seed, member.index, settings.clients);
  for (let n = 0; n < count && Date.now() < until; n++) {
    const op: Op = ops.next().value;
    trace.op(member.index, op);
    try {
      await runOp(world, member, op);
    } catch (error) {
      world.findings.expect(false, 'the simulation raised no error', () => `${JSON.stringify(op)}: ${(error as Error).stack?.split('\n').slice(0, 4).join(' | ')}`, [member.index]);
    }
  }
}

/** The other clients' p99 while one sent an adversarial input, against their p99 apart from such inputs (faults left out of both). */
function latencyBounded(world: World): void {
  const { during, apart, samples } = world.latencies.summary();
  console.log(`  other clients' p99 while an adversarial input ran: ${during ?? '-'} ms (${samples[0]} requests); apart from them: ${apart ?? '-'} ms (${samples[1]})`);
  if (during === null || apart === null) return;
  const bound = Math.max(P99_FLOOR_MS, P99_FACTOR * apart);
  world.findings.expect(during <= bound, "one client's adversarial inputs leave the others' p99 bounded",
    () => `p99 ${during} ms while they ran, ${apart} ms apart from them: more than ${bound} ms`, []);
}

function printSummaries(world: World): void {
  console.log(`  wallets and holds: ${walletSummary(world)}`);
  console.log(`  transfer batches: ${batchSummary(world)}`);
  console.log(`  balance alerts: ${alertSummary(world)}`);
  console.log(`  test clocks: ${clockSummary(world)}`);
}

function report(world: World, faults: FaultLog): void {
  const { findings } = world;
  if (findings.failures.length === 0) {
    console.log(`simulation seed ${settings.seed}: every check passed (${findings.passed} checks, ${world.stats.ops} operations, ${world.http.requests} requests, ${faults.done} faults)`);
    printSummaries(world);
    return;
  }
  printSummaries(world);
  console.log(`\nSIMULATION FAILED, seed ${settings.seed} (--seed ${settings.seed}${settings.ops === null ? '' : ` --ops ${settings.ops}`} --minutes ${settings.minutes} --clients ${settings.clients} --faults ${settings.faults})`);
  console.log(`  the trace of every request: ${traceFile} (npm run simulate -- --replay ${path.relative(process.cwd(), traceFile)})`);
  const byCheck = new Map<string, typeof findings.failures>();
  for (const failure of findings.failures) byCheck.set(failure.check, [...(byCheck.get(failure.check) ?? []), failure]);
  const involved = new Set<number>();
  for (const [check, list] of byCheck) {
    console.log(`  check failed: ${check} (${list.length}×)`);
    for (const failure of list.slice(0, 5)) {
      console.log(`    at ${(failure.atMs / 1000).toFixed(1)} s: ${failure.detail}`);
      failure.clients.forEach((c) => involved.add(c));
    }
  }
  for (const c of [...involved].slice(0, 6)) console.log(`  last operations of client ${c}:\n    ${findings.lastOps(c).join('\n    ')}`);
  console.log(`  faults: ${faults.lines.join('; ') || 'none'}`);
  console.log(`  the service processes' logs: ${path.relative(process.cwd(), LOG_DIR)}/ (a 500's details name its request id)`);
  const file = path.join(process.cwd(), '.simulation', `seed-${settings.seed}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ settings, failures: findings.failures, faults: faults.lines, lastOps: Object.fromEntries([...involved].map((c) => [c, findings.lastOps(c)])) }, null, 2));
  console.log(`  written to ${file}`);
}

/**
 * The exact model's end state (the accounts on test clocks, clock-model.ts), beside the trace: it
 * depends on the seed alone, so a second run of the seed must write the same (simulation-replay.test.ts).
 * The wall's model is not in it: what its clients' commands did depends on timing by design.
 */
function writeModelState(world: World): void {
  const file = path.join(process.cwd(), '.simulation', `model-seed-${settings.seed}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ seed: settings.seed, clients: settings.clients, ops: settings.ops, clocks: world.clocks?.model.snapshot() ?? null }, null, 2)}\n`);
}

async function main(): Promise<void> {
  if (settings.replay) process.exit(await replay(settings.replay));
  const bound = settings.ops === null ? `${settings.minutes} min` : `${settings.ops} operations (at most ${settings.minutes} min)`;
  console.log(`simulation seed ${settings.seed}: ${bound}, ${settings.clients} clients, faults ${settings.faults}`);
  const faultTargets = await startStage();
  const findings = new Findings();
  const traceNames = new Names();
  const members: Member[] = [];
  const trace = new Trace(traceFile, traceNames, () => members);
  trace.header(settings.seed, settings.clients);
  const world = createWorld(findings, trace, members);
  await setUp(world, settings.seed, settings.clients);
  members.forEach((m) => traceNames.bindMember(m));
  bindClocks(traceNames, world.clocks);
  traceNames.clock = Date.now;
  trace.on = true;

  const guardMs = settings.minutes * 60_000;
  const startedAt = Date.now();
  const faults: FaultLog = { done: 0, lines: [] };
  const stop = { now: false };
  const progress = setInterval(() => {
    console.log(`  ${((Date.now() - startedAt) / 1000).toFixed(0).padStart(4)} s: ${world.stats.ops} operations, ${world.http.requests} requests, ${faults.done} faults${faults.lines.length ? ` (last: ${faults.lines.at(-1)})` : ''}, ${findings.passed} checks passed, ${findings.failures.length} failed`);
  }, 5_000);
  // Faults are placed in operations; a run bounded by minutes alone places them at the nominal pace.
  const scheduleMs = settings.ops === null ? guardMs : (settings.ops * 1_000) / NOMINAL_OPS_PER_S;
  const schedule = faultSchedule(settings.seed, scheduleMs, settings.faults, settings.short);
  // A process run off the wall clock shifts what it decides by its step: the model allows that much more.
  const stepMs = Math.max(0, ...schedule.map((f) => Math.abs(f.stepMs ?? 0)));
  world.clockMarginMs += stepMs;
  world.rates.skewMs += stepMs;
  const faulting = runFaults(schedule, faultTargets, () => world.stats.ops, startedAt, stop, faults, (fault) => trace.fault(fault), world.latencies.faults);
  const count = (index: number) => (settings.ops === null ? Number.POSITIVE_INFINITY : opsOfClient(settings.ops, settings.clients, index));
  const clockCount = settings.ops === null ? Number.POSITIVE_INFINITY : clockOpsOf(settings.ops, settings.clients);
  const wallDone = { now: false };
  const paceOps = settings.ops === null ? 0 : settings.ops / clockCount;
  await Promise.all([
    Promise.all(world.members.map((member) => client(world, member, count(member.index), startedAt + guardMs, trace))).finally(() => { wallDone.now = true; }),
    clockClient(world, clockOps(settings.seed, clockPlan(settings.seed)), clockCount, paceOps, startedAt + guardMs, wallDone, trace),
  ]);
  stop.now = true;
  await faulting;
  if (settings.ops !== null && world.stats.ops < settings.ops) {
    console.log(`  the guard of ${settings.minutes} min stopped the run after ${world.stats.ops} of ${settings.ops} operations`);
  }
  trace.on = false; // what follows waits for the system, as long as it takes: not a replay's business
  await trace.close();
  console.log(`  load stopped; learning every outcome and waiting for the system to be quiet`);

  const db = createDb(names.databaseUrl, 2);
  try {
    await learnEverything(world);
    await readDoubtful(world);
    await voidLeftHolds(world);
    await voidClockHolds(world);
    if (!await quiet(db, world)) {
      const open = await stillOpen(db, world);
      findings.expect(false, 'the system becomes quiet', () => `still open after 180 s: ${open}`, []);
    }
    const ended = await endEverything(db, world);
    await batchChecks(db, world);
    await alertChecks(db, world);
    await holdChecks(db, world, ended);
    await finalChecks(db, world);
    await walletBalanceChecks(db, world);
    await metadataChecks(world);
    await clockFinalChecks(db, world);
    await eventsAsModelled(db, world, ended);
    await kafkaEventsAgree(db, world, names.kafkaTopicPrefix);
    latencyBounded(world);
  } finally {
    await db.destroy();
    clearInterval(progress);
  }
  writeModelState(world);
  report(world, faults);
  await stopStage(world);
  process.exit(findings.failures.length === 0 ? 0 : 1);
}

// Stopped from outside (Ctrl-C, a timeout): no process of the run left behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killStage();
    process.exit(130);
  });
}

main().catch((error) => {
  console.error(`simulation seed ${settings.seed} could not run:`, error);
  killStage(); // leave no process of the run behind
  process.exit(2);
});
