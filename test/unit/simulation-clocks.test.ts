// The simulation's test clocks without the service: a seed gives the same clocks and the same
// clock operations (every kind among them, steps from a second to months); the model plays what
// falls due in time order (a hold's expiry frees the funds a later run needs, a repeating
// schedule refused when the balance is short goes on, a month clamped to its last day); a quote
// expires at its instant on the clock; and the trace keeps a clock's instants as they are and
// names a clock account's credential, so a replay sends the same times with its own key.
import assert from 'node:assert/strict';
import { Money } from '../../ledger/money';
import { ClockModel, occurrenceMs } from '../simulation/clock-model';
import { CLOCK_ERA_MS, clockOps, clockPlan, DAY_MS, QUOTE_TTL_MS, type ClockOp } from '../simulation/clock-plan';
import { Names } from '../simulation/trace';

const first = (ops: Generator<ClockOp>, n: number): ClockOp[] => Array.from({ length: n }, () => ops.next().value);
const utc = (text: string): number => Date.parse(text);
const m = (text: string) => new Money(text);

describe('simulation test clocks', () => {
  it('a seed gives the same clocks and the same clock operations, of every kind, and another seed others', () => {
    assert.deepEqual(clockPlan(7), clockPlan(7));
    assert.deepEqual(first(clockOps(7, clockPlan(7)), 300), first(clockOps(7, clockPlan(7)), 300));
    assert.notDeepEqual(first(clockOps(7, clockPlan(7)), 50), first(clockOps(8, clockPlan(8)), 50));
    for (let seed = 0; seed < 50; seed++) {
      const plan = clockPlan(seed);
      const accounts = plan.clocks.reduce((n, c) => n + c.accounts, 0);
      assert.ok(plan.clocks.length >= 1 && plan.clocks.length <= 2 && accounts >= 2 && accounts <= 4, JSON.stringify(plan));
      assert.ok(plan.clocks.every((c) => c.startMs >= CLOCK_ERA_MS && c.startMs % 1_000 === 0));
      for (const op of first(clockOps(seed, plan), 200)) {
        if ('account' in op) assert.ok(op.account >= 0 && op.account < accounts);
        if (op.kind === 'clock_schedule') assert.ok(op.to !== op.account && op.to < accounts && op.runInS >= 2 && op.runInS <= 200 * 86_400);
        if (op.kind === 'clock_hold') assert.ok(op.expiresInS >= 2 && op.expiresInS < 30 * 86_400);
        if (op.kind === 'clock_advance') assert.ok(op.clock < plan.clocks.length && op.stepMs >= 1_000 && op.stepMs <= 120 * DAY_MS);
      }
    }
    const ops = first(clockOps(7, clockPlan(7)), 400);
    const kinds = new Set(ops.map((op) => op.kind));
    assert.deepEqual([...kinds].sort(), ['clock_advance', 'clock_execute', 'clock_fund', 'clock_hold', 'clock_quote', 'clock_schedule']);
    const steps = ops.flatMap((op) => (op.kind === 'clock_advance' ? [op.stepMs] : []));
    assert.ok(steps.some((s) => s < 60_000) && steps.some((s) => s > 30 * DAY_MS), 'steps of seconds and of months');
    assert.ok(ops.some((op) => op.kind === 'clock_schedule' && op.repeat === null) && ops.some((op) => op.kind === 'clock_schedule' && op.repeat?.every === 'month'));
  });

  it('a month is the same day at the same time, clamped to a shorter month, counted from run_at', () => {
    const runAt = utc('2101-01-31T10:00:00.503Z');
    const month = { every: 'month' as const, count: 4 };
    assert.deepEqual([1, 2, 3, 4].map((n) => new Date(occurrenceMs(runAt, month, n)).toISOString()),
      ['2101-01-31T10:00:00.503Z', '2101-02-28T10:00:00.503Z', '2101-03-31T10:00:00.503Z', '2101-04-30T10:00:00.503Z']);
    assert.equal(new Date(occurrenceMs(utc('2103-12-31T00:00:00.500Z'), month, 3)).toISOString(), '2104-02-29T00:00:00.500Z'); // a leap year
    assert.equal(occurrenceMs(runAt, { every: 'week', count: 3 }, 3), runAt + 14 * DAY_MS);
    assert.equal(occurrenceMs(runAt, null, 1), runAt);
  });

  it('an advance plays what fell due in time order: an expiry frees what a later run needs, a short balance refuses a run and the schedule goes on', () => {
    const start = utc('2100-03-01T00:00:00.000Z');
    const model = new ClockModel([start, start], [0, 0, 1]);
    model.fund(0, 'USD', m('10.00'));
    const hold = model.hold('h1', 0, 'USD', m('8.00'), start + DAY_MS + 250);
    const schedule = model.schedule({ id: 's1', account: 0, to: 2, currency: 'USD', amount: m('6.00'), runAtMs: start + 2 * DAY_MS + 500, repeat: { every: 'day', count: 3 } });
    assert.deepEqual(model.advance(0, start + DAY_MS + 249), [], 'a millisecond before its instant the hold holds');
    assert.equal(hold.status, 'active');
    const happened = model.advance(0, start + 10 * DAY_MS);
    assert.deepEqual(happened.map((h) => (h.kind === 'expired' ? `expired@${h.atMs - start}` : `run${h.run.occurrence}:${h.run.status}@${h.run.atMs - start}`)),
      [`expired@${DAY_MS + 250}`, `run1:created@${2 * DAY_MS + 500}`, `run2:refused@${3 * DAY_MS + 500}`, `run3:refused@${4 * DAY_MS + 500}`]);
    assert.deepEqual(schedule.runs.map((r) => r.error), [null, 'insufficient_funds', 'insufficient_funds']);
    assert.equal(model.nextRunMs(schedule), null);
    assert.deepEqual([model.balance(0, 'USD').available.toFixed(), model.balance(0, 'USD').held.toFixed(), model.balance(2, 'USD').available.toFixed()], ['4', '0', '6']);
    assert.equal(model.nowMs[0], start + 10 * DAY_MS);
    assert.equal(model.nowMs[1], start, 'another clock does not move');
  });

  it('a quote expires at its instant on its clock, before the balance is looked at; a hold is made only when available covers it', () => {
    const start = utc('2100-05-05T05:05:05.000Z');
    const model = new ClockModel([start], [0]);
    model.fund(0, 'EUR', m('5.00'));
    const quote = model.quote('q1', 0, 'EUR', 'USD', m('50.00'), m('54.00'));
    assert.equal(quote.expiresAtMs, start + QUOTE_TTL_MS);
    assert.equal(model.executeOutcome(quote), 'insufficient_funds');
    model.advance(0, start + QUOTE_TTL_MS - 1);
    assert.equal(model.executeOutcome(quote), 'insufficient_funds');
    model.advance(0, start + QUOTE_TTL_MS);
    assert.equal(model.executeOutcome(quote), 'quote_expired');
    assert.equal(model.holdOutcome(0, 'EUR', m('5.01')), 'insufficient_funds');
    assert.equal(model.holdOutcome(0, 'EUR', m('5.00')), 'created');
  });

  it("the trace keeps a clock's instants as they are, offsets the wall's from the request's sending, and names a clock account's credential", () => {
    const names = new Names();
    names.clock = () => utc('2026-01-01T00:00:00.000Z');
    names.bindCredential('k0.a1.key', 'sk_sandbox_abc');
    const body = names.write(JSON.stringify({ run_at: '2101-02-03T04:05:06.507Z', expires_at: '2026-01-01T00:00:01.000Z' }), false);
    assert.equal(body, '{"run_at":"2101-02-03T04:05:06.507Z","expires_at":"⟪t+1000⟫"}');
    // A replay sends it later than the run did (one request at a time): the hold still expires a second after it is asked for.
    const replay = new Names();
    replay.clock = () => utc('2026-01-01T00:07:30.000Z');
    assert.equal(replay.read(body), '{"run_at":"2101-02-03T04:05:06.507Z","expires_at":"2026-01-01T00:07:31.000Z"}');
    // A retry under the key sends its first body again, in the run and in the replay, whenever it goes.
    let now = utc('2026-01-01T00:00:00.000Z');
    names.clock = () => now;
    const first = names.write(JSON.stringify({ expires_at: '2026-01-01T00:00:05.000Z' }), false, 'key-1');
    now += 3_000;
    assert.equal(names.write(JSON.stringify({ expires_at: '2026-01-01T00:00:05.000Z' }), false, 'key-1'), first);
    let later = utc('2026-01-01T00:07:30.000Z');
    replay.clock = () => later;
    const sentFirst = replay.read(first, 'key-1');
    later += 9_000;
    assert.equal(replay.read(first, 'key-1'), sentFirst);
    assert.equal(sentFirst, '{"expires_at":"2026-01-01T00:07:35.000Z"}');
    assert.equal(names.credentialName('sk_sandbox_abc'), 'k0.a1.key');
    assert.equal(names.credential('k0.a1.key'), 'sk_sandbox_abc');
  });
});
