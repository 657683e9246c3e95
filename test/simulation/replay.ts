// `npm run simulate -- --replay .simulation/trace-seed-N.jsonl`: a run's traced requests sent again,
// one at a time in the order they were first sent, on new accounts of the same set-up, with each
// fault where it fired; the ids the service makes are bound by their place in the answers. Prints
// the first final answer whose status or error differs from the trace's (and how many did), and
// exits 1 if any did. Answers that were not final (202, 429, 503, no answer) are not compared:
// their timing is the machine's. Two things a serial replay cannot repeat: the interleaving of
// requests sent at once, and what happened meanwhile in the background (a partner's answer, a
// hold's expiry); a difference there is told as such, with the requests that led to it.
// A test clock's advance answered 200 is waited for until the clock is ready, as the run's clock
// client waited, so the requests after it meet the clock where the run's did.
import fs from 'node:fs';
import { sleep } from '../bench/harness';
import { ADVANCE_WAIT_MS_MAX } from './clock-ops';
import { bindClocks } from './clock-stage';
import { runFault } from './faults';
import { Findings } from './findings';
import { isFinal, type Sent } from './http';
import { createWorld, killStage, setUp, startStage, stopStage } from './stage';
import { Names, readTrace, type TraceLine } from './trace';
import { CLOCK_MARGIN_MS, type World } from './world';

type Request = Extract<TraceLine, { t: 'req' }>;
type Traced = Extract<TraceLine, { t: 'ans' }>;

const describe = (status: Traced['status'], error: string | null): string => `${status}${error ? ` ${error}` : ''}`;

export async function replay(file: string): Promise<number> {
  const lines = readTrace(file);
  const head = lines[0];
  if (head?.t !== 'run') throw new Error(`${file} is not a simulation's trace (its first line names no run)`);
  const { seed, clients } = head;
  console.log(`replay of ${file}: ${lines.filter((l) => l.t === 'req').length} requests of ${clients} clients, seed ${seed}`);
  const faultTargets = await startStage();
  const findings = new Findings(false);
  const world = createWorld(findings, null);
  try {
    await setUp(world, seed, clients);
    const names = new Names();
    world.members.forEach((m) => names.bindMember(m));
    bindClocks(names, world.clocks);
    names.clock = Date.now;
    const differences: string[] = [];
    const requests = new Map<number, Request>();
    const recent: string[] = [];
    let compared = 0;
    let first: string | null = null;
    let firstUnraced: string | null = null;
    let differing = 0;
    const answers = new Map<number, Sent>();
    // Requests a client had in flight together: the order the service took them in is not in the trace.
    const inFlight = new Map<number, Set<number>>();
    const raced = new Map<number, number[]>();
    for (const line of lines) {
      if (line.t === 'fault') {
        console.log(`  fault: ${line.fault.action} ${line.fault.target} for ${line.fault.downMs} ms`);
        // From a clock step on, the model allows what it shifts, as the run did.
        world.clockMarginMs = Math.max(world.clockMarginMs, CLOCK_MARGIN_MS + Math.abs(line.fault.stepMs ?? 0));
        world.rates.skewMs = Math.max(world.rates.skewMs, world.clockMarginMs);
        await runFault(line.fault, faultTargets);
      } else if (line.t === 'req') {
        requests.set(line.seq, line);
        const flying = inFlight.get(line.client) ?? new Set<number>();
        for (const other of flying) {
          raced.set(line.seq, [...(raced.get(line.seq) ?? []), other]);
          raced.set(other, [...(raced.get(other) ?? []), line.seq]);
        }
        flying.add(line.seq);
        inFlight.set(line.client, flying);
        const sent = await send(world, names, line);
        answers.set(line.seq, sent);
        await advanceDone(world, names, line, sent);
        recent.push(`c${line.client} ${line.method} ${line.path}`);
        if (recent.length > 8) recent.shift();
      } else if (line.t === 'ans' && answers.has(line.seq)) {
        const now = answers.get(line.seq)!;
        answers.delete(line.seq);
        inFlight.get(requests.get(line.seq)!.client)?.delete(line.seq);
        if (typeof now !== 'string' && line.body !== null) names.learnFrom(JSON.parse(line.body), now.body);
        if (typeof line.status !== 'number' || !isFinal({ status: line.status, body: { error: line.error }, retryAfter: null })) continue;
        compared++;
        const nowStatus = typeof now === 'string' ? now : now.status;
        const nowError = typeof now === 'string' ? null : now.body?.error ?? null;
        if (nowStatus === line.status && nowError === line.error) continue;
        differing++;
        const request = requests.get(line.seq)!;
        const race = raced.has(line.seq) ? ` (sent beside request ${raced.get(line.seq)!.join(', ')} of its client: a race the trace cannot order)` : '';
        const what = `request ${line.seq} (c${request.client} ${request.method} ${request.path}): traced ${describe(line.status, line.error)}, now ${describe(nowStatus, nowError)}${race}`;
        differences.push(what);
        if (first === null) first = `${what}\n    after: ${recent.join('\n           ')}`;
        if (firstUnraced === null && !race) firstUnraced = what;
      }
    }
    if (first === null) console.log(`replay: every one of ${compared} final answers as traced`);
    else {
      const listed = file.replace(/\.jsonl$/, '') + '.differences.txt';
      fs.writeFileSync(listed, `${differences.join('\n')}\n`);
      console.log(`replay: ${differing} of ${compared} final answers differ (all in ${listed}); the first: ${first}`);
      if (firstUnraced !== null && !first.startsWith(firstUnraced)) console.log(`  the first not in a race: ${firstUnraced}`);
    }
    return first === null ? 0 : 1;
  } catch (error) {
    killStage();
    throw error;
  } finally {
    await stopStage(world);
  }
}

/**
 * A test clock's advance taken: waited for until the clock is ready again (bounded), as the run's
 * clock client did, so that the next request meets the clock where the run's did.
 */
async function advanceDone(world: World, names: Names, request: Request, sent: Sent): Promise<void> {
  if (request.method !== 'POST' || !request.path.endsWith('/advance') || typeof sent === 'string' || sent.status !== 200) return;
  const clock = { ...request, method: 'GET', path: request.path.slice(0, -'/advance'.length), body: null };
  const deadline = Date.now() + ADVANCE_WAIT_MS_MAX;
  while (Date.now() < deadline) {
    const read = await send(world, names, clock);
    if (typeof read !== 'string' && read.body?.status === 'ready') return;
    await sleep(200);
  }
}

/** How long a replayed request waits out the rate limit before its answer is taken as it is. */
const RATE_LIMITED_FOR_MS_MAX = 30_000;

/**
 * One traced request sent as this run's member would send it. A replay sends one request at a
 * time, at its own pace, not the run's: a 429 the rate limit answers it is waited out (Retry-After)
 * and the request sent again under its key, as the run's client would, so that the answer compared
 * is the service's decision, not the replay's pace.
 */
async function send(world: World, names: Names, request: Request): Promise<Sent> {
  const deadline = Date.now() + RATE_LIMITED_FOR_MS_MAX;
  for (;;) {
    const sent = await sendOnce(world, names, request);
    if (typeof sent === 'string' || sent.status !== 429 || Date.now() >= deadline) return sent;
    await sleep(1_000 * Number.parseFloat(sent.retryAfter ?? '1'));
  }
}

function sendOnce(world: World, names: Names, request: Request): Promise<Sent> {
  const member = world.members[request.client];
  const token = request.auth === 'key' ? member.key : request.auth === 'session' ? member.token
    : request.auth.startsWith('as:') ? names.credential(request.auth.slice(3)) : undefined;
  let path: string;
  let body: unknown;
  try {
    path = names.read(request.path, request.key);
    body = request.body === null ? undefined : JSON.parse(names.read(request.body, request.key));
  } catch (error) {
    // An id the trace's answers named and this run's did not make (an earlier answer differed).
    return Promise.resolve({ status: 0, body: { error: `unbound: ${(error as Error).message}` }, retryAfter: null });
  }
  return world.http.send(request.client, request.method, path, body, {
    token, key: request.key ?? undefined, headers: request.scenario ? { 'Sandbox-Scenario': request.scenario } : {},
  });
}
