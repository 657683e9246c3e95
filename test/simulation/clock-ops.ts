// The clock client's operations (clock-plan.ts), each answer checked against the exact model of
// the clock accounts (clock-model.ts) as it arrives: a hold made or refused for want of funds as
// the model's balance says; a quote made at the clock's time and expiring thirty seconds later on
// it; an execution refused quote_expired exactly when the clock has passed that, insufficient_funds
// exactly when the balance is short; a schedule taken with its run_at; an advance taken, then
// waited for until the clock is ready at its target (a bounded wait: a process the run kills may
// hold the advance's lease), and what fell due checked (clock-checks.ts).
import { sleep } from '../bench/harness';
import { Money } from '../../ledger/money';
import { afterAdvance, clockExpect } from './clock-checks';
import type { ModelQuote } from './clock-model';
import { HOLD_MS, RUN_MS, SCHEDULES_MAX, type ClockOp } from './clock-plan';
import type { Answer } from './http';
import type { Trace } from './trace';
import type { ClockAccount, World } from './world';
import { money } from './writes';

/**
 * How long an advance may take to be taken and reach `ready`: the lease of a killed worker (60 s)
 * runs out before another takes the advance over, and a stopped Postgres or Kafka may come first.
 */
export const ADVANCE_WAIT_MS_MAX = 240_000;
/** A clock write's repeats under its key (http.ts decide) stop here; past it the model cannot follow. */
const WRITE_DEADLINE_MS = 120_000;

const iso = (ms: number): string => new Date(ms).toISOString();
const created = (answer: Answer): boolean => answer.status === 200 || answer.status === 201;

/** A write sent under one key until its answer is final; none means the model cannot follow any more. */
async function decide(world: World, account: ClockAccount, label: string, path: string, body: unknown): Promise<Answer | null> {
  const clocks = world.clocks!;
  world.findings.trace(clocks.client, `#${clocks.opIndex} ${label}`);
  const answer = await world.http.decide(clocks.client, path, body, clocks.keys.uuid(), { token: account.key, deadlineMs: WRITE_DEADLINE_MS });
  if (!answer) {
    clocks.lost = `${label}: no final answer in ${WRITE_DEADLINE_MS / 1000} s`;
    clockExpect(world, false, "a clock account's write is answered", () => clocks.lost!);
    return null;
  }
  world.findings.trace(clocks.client, `  <- ${answer.status} ${answer.body?.error ?? ''}`);
  return answer;
}

async function fund(world: World, op: Extract<ClockOp, { kind: 'clock_fund' }>): Promise<void> {
  const account = world.clocks!.accounts[op.account];
  const amount = money(op.cents);
  const answer = await decide(world, account, `k${account.index} faucet ${amount} ${op.currency}`, '/v1/sandbox/faucet', { currency: op.currency, amount });
  if (!answer) return;
  if (clockExpect(world, created(answer), 'a clock account is funded', () => `${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`)) world.clocks!.model.fund(account.index, op.currency, new Money(amount));
}

async function hold(world: World, op: Extract<ClockOp, { kind: 'clock_hold' }>): Promise<void> {
  const { model, accounts } = world.clocks!;
  const account = accounts[op.account];
  const amount = new Money(money(op.cents));
  const expiresAtMs = Math.floor(model.nowOf(account.index) / 1_000) * 1_000 + op.expiresInS * 1_000 + HOLD_MS;
  const want = model.holdOutcome(account.index, op.currency, amount);
  const label = `k${account.index} hold ${amount.toFixed()} ${op.currency} until ${iso(expiresAtMs)}`;
  const answer = await decide(world, account, label, '/v1/holds', { amount: money(op.cents), currency: op.currency, expires_at: iso(expiresAtMs), description: 'on a test clock' });
  if (!answer) return;
  const got = created(answer) ? 'created' : answer.body?.error;
  clockExpect(world, got === want, "a clock account's hold made or refused as the model's balance says", () => `${label}: ${answer.status} ${got}, the model's ${want} (available ${model.balance(account.index, op.currency).available.toFixed()})`);
  if (!created(answer)) { world.clocks!.stats.holdsRefused++; return; }
  clockExpect(world, answer.body.expires_at === iso(expiresAtMs) && answer.body.status === 'active', 'a hold on a clock expires when it was told to',
    () => `${label}: ${answer.body.status}, expires_at ${answer.body.expires_at}`);
  // Followed as the service made it, so that one wrong answer does not make every later check fail.
  model.hold(answer.body.id, account.index, op.currency, amount, expiresAtMs);
}

async function quote(world: World, op: Extract<ClockOp, { kind: 'clock_quote' }>): Promise<void> {
  const { model, accounts } = world.clocks!;
  const account = accounts[op.account];
  const amount = money(op.cents);
  const nowMs = model.nowOf(account.index);
  const label = `k${account.index} quote ${amount} ${op.from}->${op.to}`;
  const answer = await decide(world, account, label, '/v1/fx/quote', { from_currency: op.from, to_currency: op.to, from_amount: amount });
  if (!answer || !clockExpect(world, created(answer), 'a quote on a clock is made', () => `${label}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`)) return;
  // The price is the service's (the rate book judges prices on the wall); the times are the clock's.
  const made = model.quote(answer.body.id, account.index, op.from, op.to, new Money(answer.body.from_amount), new Money(answer.body.to_amount));
  clockExpect(world, answer.body.created_at === iso(nowMs) && answer.body.expires_at === iso(made.expiresAtMs), "a quote is made at its clock's time and expires on it",
    () => `${label}: created ${answer.body.created_at}, expires ${answer.body.expires_at}; the clock is at ${iso(nowMs)}`);
  // At once, the clock not having moved however long the wall took: it must execute, funds allowing.
  if (op.executeNow) await executeQuote(world, made);
}

async function execute(world: World, op: Extract<ClockOp, { kind: 'clock_execute' }>): Promise<void> {
  const open = world.clocks!.model.quotes.filter((q) => q.state === 'open');
  if (open.length > 0) await executeQuote(world, open[Math.floor(op.pick * open.length)]);
}

async function executeQuote(world: World, q: ModelQuote): Promise<void> {
  const clocks = world.clocks!;
  const want = clocks.model.executeOutcome(q);
  const label = `k${q.account} execute quote ${q.id.slice(0, 8)} (expires ${iso(q.expiresAtMs)}, clock at ${iso(clocks.model.nowOf(q.account))})`;
  const answer = await decide(world, clocks.accounts[q.account], label, '/v1/fx/execute', { quote_id: q.id });
  if (!answer) return;
  const got = created(answer) ? 'executed' : answer.body?.error;
  clockExpect(world, got === want, 'a quote past its expiry on the clock is refused on execute, and only then', () => `${label}: ${answer.status} ${got}, the model's ${want}`);
  if (got === 'executed') clocks.model.execute(q);
  else if (got === 'quote_expired') { q.state = 'expired'; clocks.stats.quotesExpired++; }
}

async function schedule(world: World, op: Extract<ClockOp, { kind: 'clock_schedule' }>): Promise<void> {
  const { model, accounts } = world.clocks!;
  if (model.schedules.length >= SCHEDULES_MAX) return;
  const [account, payee] = [accounts[op.account], accounts[op.to]];
  const amount = new Money(money(op.cents));
  const runAtMs = Math.floor(model.nowOf(account.index) / 1_000) * 1_000 + op.runInS * 1_000 + RUN_MS + model.schedules.length;
  const label = `k${account.index} schedule ${amount.toFixed()} ${op.currency} to k${payee.index} at ${iso(runAtMs)}${op.repeat ? ` every ${op.repeat.every} ×${op.repeat.count}` : ''}`;
  const body = { transfer: { recipient_email: payee.email, amount: money(op.cents), currency: op.currency }, run_at: iso(runAtMs), ...(op.repeat ? { repeat: op.repeat } : {}) };
  const answer = await decide(world, account, label, '/v1/scheduled-transfers', body);
  if (!answer || !clockExpect(world, created(answer), 'a schedule on a clock is taken', () => `${label}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`)) return;
  clockExpect(world, answer.body.status === 'scheduled' && answer.body.run_at === iso(runAtMs) && answer.body.next_run_at === iso(runAtMs) && answer.body.runs.length === 0,
    'a schedule on a clock is taken as sent', () => `${label}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  model.schedule({ id: answer.body.id, account: account.index, to: payee.index, currency: op.currency, amount, runAtMs, repeat: op.repeat });
}

/** Reads the clock with a credential of an account on it; null while no answer comes. */
async function readClock(world: World, clock: number): Promise<any | null> {
  const clocks = world.clocks!;
  const account = clocks.accounts.find((a) => a.clock === clock)!;
  const answer = await world.http.read(clocks.client, `/v1/sandbox/test-clocks/${clocks.ids[clock]}`, { token: account.key, deadlineMs: 5_000, timeoutMs: 5_000 });
  return typeof answer === 'string' || answer.status !== 200 ? null : answer.body;
}

/**
 * Asks for the advance until it is taken: 200 advancing; or, after an answer lost to a fault, the
 * clock read back advancing to the target (409 test_clock_advancing) or already there (400).
 */
async function advanceTaken(world: World, clock: number, targetMs: number, deadline: number): Promise<boolean> {
  const clocks = world.clocks!;
  const account = clocks.accounts.find((a) => a.clock === clock)!;
  while (Date.now() < deadline) {
    const sent = await world.http.send(clocks.client, 'POST', `/v1/sandbox/test-clocks/${clocks.ids[clock]}/advance`, { frozen_time: iso(targetMs) }, { token: account.key });
    if (typeof sent !== 'string' && sent.status === 200) {
      return clockExpect(world, sent.body?.status === 'advancing' && sent.body?.advancing_to === iso(targetMs), 'an advance is answered advancing to its target',
        () => `k${clock} to ${iso(targetMs)}: ${JSON.stringify(sent.body).slice(0, 200)}`);
    }
    const read = await readClock(world, clock);
    if (read && (read.advancing_to === iso(targetMs) || read.frozen_time === iso(targetMs))) return true;
    if (typeof sent !== 'string' && sent.status < 500 && sent.status !== 429) {
      return clockExpect(world, false, 'an advance is answered advancing to its target', () => `k${clock} to ${iso(targetMs)}: ${sent.status} ${JSON.stringify(sent.body).slice(0, 200)}`);
    }
    await sleep(500);
  }
  return false;
}

async function advance(world: World, op: Extract<ClockOp, { kind: 'clock_advance' }>): Promise<void> {
  const clocks = world.clocks!;
  const targetMs = clocks.model.nowMs[op.clock] + op.stepMs;
  world.findings.trace(clocks.client, `#${clocks.opIndex} advance k${op.clock} by ${op.stepMs} ms to ${iso(targetMs)}`);
  const startedAt = Date.now();
  const deadline = startedAt + ADVANCE_WAIT_MS_MAX;
  let ready = false;
  if (await advanceTaken(world, op.clock, targetMs, deadline)) {
    while (!ready && Date.now() < deadline) {
      const read = await readClock(world, op.clock);
      ready = read?.status === 'ready' && read.frozen_time === iso(targetMs);
      if (!ready) await sleep(200);
    }
  }
  if (!clockExpect(world, ready, 'an advanced test clock reaches ready at its target within the bound',
    () => `clock k${op.clock} to ${iso(targetMs)}: not ready after ${((Date.now() - startedAt) / 1000).toFixed(0)} s`)) {
    clocks.lost = `clock k${op.clock} never ready at ${iso(targetMs)}`;
    return;
  }
  clocks.stats.advances++;
  world.findings.trace(clocks.client, `  ready in ${Date.now() - startedAt} ms`);
  await afterAdvance(world, op.clock, clocks.model.advance(op.clock, targetMs));
}

export async function runClockOp(world: World, op: ClockOp): Promise<void> {
  switch (op.kind) {
    case 'clock_fund': return fund(world, op);
    case 'clock_hold': return hold(world, op);
    case 'clock_quote': return quote(world, op);
    case 'clock_execute': return execute(world, op);
    case 'clock_schedule': return schedule(world, op);
    case 'clock_advance': return advance(world, op);
  }
}

/**
 * The clock client: its share of operations, each begun in the trace before it is sent; stops
 * early at `until`, or once the model cannot follow. Its n-th operation waits for the wall's
 * clients to have begun n × `paceOps` of theirs (until they are done), so its advances meet the
 * run's faults, which are placed in the wall's operations, all through the run.
 */
export async function clockClient(world: World, ops: Generator<ClockOp>, count: number, paceOps: number, until: number, wallDone: { now: boolean }, trace: Trace): Promise<void> {
  const clocks = world.clocks!;
  for (let n = 0; n < count && Date.now() < until && clocks.lost === null; n++) {
    while (world.stats.ops < n * paceOps && !wallDone.now && Date.now() < until) await sleep(100);
    const op: ClockOp = ops.next().value;
    clocks.opIndex = n;
    trace.op(clocks.client, op);
    try {
      await runClockOp(world, op);
    } catch (error) {
      clockExpect(world, false, 'the simulation raised no error', () => `${JSON.stringify(op)}: ${(error as Error).stack?.split('\n').slice(0, 4).join(' | ')}`);
      clocks.lost = 'an error of the simulation';
    }
  }
}
