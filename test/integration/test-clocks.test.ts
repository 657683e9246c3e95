// Test clocks (DESIGN.md section 5i) against the running service: made, read and advanced; the
// refusals (back in time, too far at once, an unknown clock, another account's clock, an advance
// while one is under way); a hold on a clock expiring exactly at its instant; a quote expired by
// the clock while the wall says it holds; a month of a daily schedule run in one advance, each run
// at its own instant; an advance taken over after its worker died with a run claimed; an advance
// taken up as it is announced, and when the announcement was lost; accounts not on the clock untouched.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { db, testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { balances, fund } from '../support/money';
import { claimDueOccurrences } from '../../src/scheduled-transfers/runs';

const base = () => testService().baseUrl;
const master = () => testService().runtime.config.masterKey;
const DAY_MS = 86_400_000;
/** A clock far from the wall (a year after this run's own time), so nothing of the wall's could be mistaken for it. */
const clockStart = () => new Date(Math.floor(Date.now() / 1000) * 1000 + 365 * DAY_MS);
const iso = (ms: number) => new Date(ms).toISOString();

const makeClock = (body: unknown) => call(base(), 'POST', '/v1/sandbox/test-clocks', body);
const readClock = (token: string, id: string) => call(base(), 'GET', `/v1/sandbox/test-clocks/${id}`, undefined, { token });
const advance = (token: string, id: string, frozenTime: string) => call(base(), 'POST', `/v1/sandbox/test-clocks/${id}/advance`, { frozen_time: frozenTime }, { token });

async function newClock(at: Date, name?: string): Promise<any> {
  const answer = await makeClock({ frozen_time: at.toISOString(), ...(name ? { name } : {}) });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answer.body;
}

/** The clock once it is ready again after an advance, read with `token`. */
function ready(token: string, id: string, timeoutMs = 60_000): Promise<any> {
  return eventually(async () => {
    const { body } = await readClock(token, id);
    return body.status === 'ready' ? body : undefined;
  }, timeoutMs, `test clock ${id} ready`);
}

/** Advances and waits until the clock is ready at its new time. */
async function advanced(token: string, id: string, to: number): Promise<any> {
  const answer = await advance(token, id, iso(to));
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.status, 'advancing');
  assert.equal(answer.body.advancing_to, iso(to));
  const done = await ready(token, id);
  assert.equal(done.frozen_time, iso(to));
  return done;
}

const onClock = (clockId: string) => signUp(base(), { test_clock_id: clockId });

async function hold(account: SignedUp, body: Record<string, unknown>): Promise<any> {
  const answer = await call(base(), 'POST', '/v1/holds', { currency: 'USD', ...body }, { token: account.key, idempotencyKey: randomUUID() });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answer.body;
}
const readHold = async (account: SignedUp, id: string) => (await call(base(), 'GET', `/v1/holds/${id}`, undefined, { token: account.key })).body;

/** A daily scheduled transfer of `owner`'s from `runAt`, `count` runs in all. */
async function scheduleDaily(owner: SignedUp, to: string, amount: string, runAt: number, count: number): Promise<any> {
  const scheduled = await call(base(), 'POST', '/v1/scheduled-transfers', {
    transfer: { recipient_email: to, amount, currency: 'USD' }, run_at: iso(runAt), repeat: { every: 'day', count },
  }, { token: owner.key, idempotencyKey: randomUUID() });
  assert.equal(scheduled.status, 201, JSON.stringify(scheduled.body));
  return scheduled;
}

/** The account's events of a type, in its sequence. */
async function eventsOf(accountId: string, type: string): Promise<any[]> {
  const rows = await db()('account_events').where('account_id', accountId).orderBy('account_seq').select('payload');
  return rows.map((r: { payload: any }) => r.payload).filter((e: any) => e.type === type);
}

describe('test clocks', () => {
  it('are made without a credential, read and advanced by an account on them or the master key, and refuse what a clock cannot do', async () => {
    const start = clockStart();
    const made = await newClock(start, 'month-end run');
    assert.deepEqual({ ...made, id: undefined, created_at: undefined }, {
      id: undefined, name: 'month-end run', status: 'ready', frozen_time: start.toISOString(), advancing_to: null, created_at: undefined,
    });
    const alice = await onClock(made.id);
    const stranger = await signUp(base());
    assert.deepEqual((await readClock(alice.key, made.id)).body, made);
    assert.deepEqual((await readClock(master(), made.id)).body, made);

    // Refusals, in the order the rules apply.
    expectError(await makeClock({}), 400, 'invalid_request', 'frozen_time');
    expectError(await readClock(alice.key, randomUUID()), 404, 'test_clock_not_found');
    expectError(await readClock(stranger.key, made.id), 403, 'cross_account_access_denied');
    expectError(await advance(stranger.key, made.id, iso(start.getTime() + 1000)), 403, 'cross_account_access_denied');
    expectError(await advance(alice.key, made.id, iso(start.getTime() - 1000)), 400, 'invalid_request', 'frozen_time', 'back in time');
    expectError(await advance(alice.key, made.id, start.toISOString()), 400, 'invalid_request', 'frozen_time', 'to the same instant');
    expectError(await advance(alice.key, made.id, iso(start.getTime() + 731 * DAY_MS)), 400, 'invalid_request', 'frozen_time', 'more than 730 days at once');
    expectError(await call(base(), 'POST', '/v1/sandbox/accounts', {
      email: `${randomUUID()}@example.com`, password: 'correct horse battery staple', business_name: 'B', country_code: 'GB', test_clock_id: randomUUID(),
    }), 400, 'invalid_request', 'test_clock_id');

    // An advance under way (here: one whose worker died with its lease still running, and a hold
    // due on the way) refuses another; once the lease has run out, another worker takes it over
    // and finishes it, releasing the hold once.
    await fund(base(), alice.key, 'USD', '5.00');
    const due = await hold(alice, { amount: '1.00', expires_at: iso(start.getTime() + DAY_MS) });
    const target = iso(start.getTime() + 2 * DAY_MS);
    await db()('test_clocks').where('id', made.id).update({ status: 'advancing', advancing_to: target, claim_id: randomUUID(), claimed_until: new Date(Date.now() + 3_600_000) });
    expectError(await advance(alice.key, made.id, iso(start.getTime() + 3 * DAY_MS)), 409, 'test_clock_advancing');
    assert.equal((await readClock(alice.key, made.id)).body.status, 'advancing');
    await db()('test_clocks').where('id', made.id).update({ claimed_until: new Date(Date.now() - 1000) });
    const done = await ready(alice.key, made.id);
    assert.deepEqual({ frozen_time: done.frozen_time, advancing_to: done.advancing_to }, { frozen_time: target, advancing_to: null });
    assert.equal((await readHold(alice, due.id)).status, 'expired');
    assert.equal((await eventsOf(alice.account.id, 'hold.released')).length, 1);
    assert.equal((await balances(base(), alice.token)).USD.available, '5.00');
  });

  it('expires a hold made on a clock exactly at its instant, on the clock, not a second before', async () => {
    const start = clockStart();
    const clock = await newClock(start);
    const bob = await onClock(clock.id);
    await fund(base(), bob.key, 'USD', '10.00');
    const made = await hold(bob, { amount: '4.00' });
    // Made on the clock's time: created then, and its default lifetime (7 days) counted from it.
    assert.equal(made.expires_at, iso(start.getTime() + 7 * DAY_MS));
    const expiresAt = Date.parse(made.expires_at);

    await advanced(bob.key, clock.id, expiresAt - 1000);
    assert.equal((await readHold(bob, made.id)).status, 'active');
    assert.equal((await balances(base(), bob.token)).USD.available, '6.00');

    await advanced(bob.key, clock.id, expiresAt);
    assert.equal((await readHold(bob, made.id)).status, 'expired');
    assert.equal((await balances(base(), bob.token)).USD.available, '10.00');
    const [released] = await eventsOf(bob.account.id, 'hold.released');
    assert.equal(released.created_at, iso(expiresAt), 'the release is told at the clock\'s instant');
    const [created] = await eventsOf(bob.account.id, 'hold.created');
    assert.equal(created.created_at, start.toISOString(), 'the hold was made at the clock\'s time');
  });

  it('expires a quote on the clock while the wall says it still holds', async () => {
    const start = clockStart();
    const clock = await newClock(start);
    const carol = await onClock(clock.id);
    await fund(base(), carol.key, 'USD', '100.00');
    const quote = await call(base(), 'POST', '/v1/fx/quote', { from_currency: 'USD', to_currency: 'EUR', from_amount: '10.00' }, { token: carol.key, idempotencyKey: randomUUID() });
    assert.equal(quote.status, 201, JSON.stringify(quote.body));
    assert.equal(quote.body.created_at, start.toISOString());
    assert.equal(quote.body.expires_at, iso(start.getTime() + 30_000));

    await advanced(carol.key, clock.id, start.getTime() + 31_000);
    assert.equal((await call(base(), 'GET', `/v1/fx/quotes/${quote.body.id}`, undefined, { token: carol.key })).body.status, 'expired');
    const executed = await call(base(), 'POST', '/v1/fx/execute', { quote_id: quote.body.id }, { token: carol.key, idempotencyKey: randomUUID() });
    expectError(executed, 422, 'quote_expired');
    assert.equal((await balances(base(), carol.token)).USD.available, '100.00');
  });

  it('runs a month of a daily schedule in one advance: thirty transfers in order, each at its own instant, balances to the cent; others untouched', async () => {
    const start = clockStart();
    const clock = await newClock(start);
    const dave = await onClock(clock.id);
    const payee = await signUp(base());
    const bystander = await signUp(base());
    await fund(base(), dave.key, 'USD', '100.00');
    await fund(base(), bystander.key, 'USD', '7.00');
    const runAt = start.getTime() + 3_600_000;
    const scheduled = await scheduleDaily(dave, payee.email, '1.01', runAt, 31);
    // run_at is read on the clock: an instant the wall has long passed is refused.
    expectError(await call(base(), 'POST', '/v1/scheduled-transfers', {
      transfer: { recipient_email: payee.email, amount: '1.00', currency: 'USD' }, run_at: iso(start.getTime() - 3_600_000),
    }, { token: dave.key, idempotencyKey: randomUUID() }), 400, 'invalid_request', 'run_at');

    // Thirty occurrences fall in the month (the 31st is a day after it).
    const end = runAt + 29 * DAY_MS + 1000;
    await advanced(dave.key, clock.id, end);
    const { body: schedule } = await call(base(), 'GET', `/v1/scheduled-transfers/${scheduled.body.id}`, undefined, { token: dave.key });
    assert.equal(schedule.runs.length, 30);
    assert.equal(schedule.next_run_at, iso(runAt + 30 * DAY_MS));
    for (const [i, run] of schedule.runs.entries()) {
      assert.equal(run.status, 'created', JSON.stringify(run));
      assert.equal(run.run_at, iso(runAt + i * DAY_MS), `run ${i + 1} made at its own instant`);
      const made = await call(base(), 'GET', `/v1/transfers/${run.transfer_id}`, undefined, { token: dave.key });
      assert.equal(made.body.status, 'completed');
      assert.equal(made.body.created_at, iso(runAt + i * DAY_MS), `transfer ${i + 1} made at its own instant`);
    }
    const runEvents = await eventsOf(dave.account.id, 'scheduled_transfer.run');
    assert.deepEqual(runEvents.map((e) => e.created_at), schedule.runs.map((r: any) => r.run_at), 'each run told at its instant, in order');
    assert.deepEqual(runEvents.map((e) => JSON.parse(e.data.attributes).occurrence), Array.from({ length: 30 }, (_, i) => i + 1));
    assert.equal((await balances(base(), dave.token)).USD.available, '69.70'); // 100.00 - 30 × 1.01
    assert.equal((await balances(base(), payee.token)).USD.available, '30.30');
    assert.equal((await balances(base(), bystander.token)).USD.available, '7.00');
    assert.equal((await readClock(dave.key, clock.id)).body.status, 'ready');
  });

  it('takes over an advance whose worker died with a run claimed: the run is made and told at the instant it fell due, then the clock steps on', async () => {
    const start = clockStart();
    const clock = await newClock(start);
    const erin = await onClock(clock.id);
    const payee = await signUp(base());
    await fund(base(), erin.key, 'USD', '10.00');
    const runAt = start.getTime() + 3_600_000;
    const scheduled = await scheduleDaily(erin, payee.email, '1.00', runAt, 3);

    // What a worker leaves when it dies mid-advance: the clock at the first run's instant, that
    // run claimed (its command made, never decided), the advance's lease run out.
    await db()('test_clocks').where('id', clock.id).update({ frozen_time: new Date(runAt) });
    assert.equal((await claimDueOccurrences(db(), new Date(runAt), DAY_MS, 100, clock.id)).length, 1);
    const target = runAt + 2 * DAY_MS + 1000;
    await db()('test_clocks').where('id', clock.id).update({ status: 'advancing', advancing_to: new Date(target), claim_id: randomUUID(), claimed_until: new Date(Date.now() - 1000) });
    const done = await ready(erin.key, clock.id);
    assert.equal(done.frozen_time, iso(target));

    const { body: schedule } = await call(base(), 'GET', `/v1/scheduled-transfers/${scheduled.body.id}`, undefined, { token: erin.key });
    assert.deepEqual(schedule.runs.map((run: any) => [run.occurrence, run.status, run.run_at]), [1, 2, 3].map((n) => [n, 'created', iso(runAt + (n - 1) * DAY_MS)]));
    for (const run of schedule.runs) {
      const made = await call(base(), 'GET', `/v1/transfers/${run.transfer_id}`, undefined, { token: erin.key });
      assert.equal(made.body.created_at, run.run_at, `the transfer of run ${run.occurrence} made at its own instant, not the next step's`);
    }
    const runEvents = await eventsOf(erin.account.id, 'scheduled_transfer.run');
    assert.deepEqual(runEvents.map((e) => e.created_at), schedule.runs.map((run: any) => run.run_at), 'each run told once, at its instant, in order');
    assert.equal((await balances(base(), erin.token)).USD.available, '7.00');
    assert.equal((await balances(base(), payee.token)).USD.available, '3.00');
  });

  it('takes up an advance as it is announced, and one announced while the workers could not hear it as soon as they listen again', async () => {
    const clock = await newClock(clockStart());
    const erin = await onClock(clock.id);
    const start = Date.parse(clock.frozen_time);
    // Far below the look for advances whose worker died (every 5 s while the workers listen).
    const TAKEN_UP_WITHIN_MS = 2_500;
    let asked = Date.now();
    await advanced(erin.key, clock.id, start + DAY_MS);
    const announcedMs = Date.now() - asked;
    assert.ok(announcedMs < TAKEN_UP_WITHIN_MS, `an announced advance is ready in ${announcedMs} ms`);

    // The workers' listening connections end from the server's side: the next announcement is lost.
    const { rows } = await db().raw(`SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE query = 'LISTEN test_clock_advances' AND datname = current_database()`);
    assert.ok(rows.length >= 1, 'a ledger listens for advances');
    asked = Date.now();
    await advanced(erin.key, clock.id, start + 2 * DAY_MS);
    const unheardMs = Date.now() - asked;
    assert.ok(unheardMs < TAKEN_UP_WITHIN_MS, `an advance made while no worker listened is ready in ${unheardMs} ms`);
    await eventually(async () => {
      const { rows: listening } = await db().raw(`SELECT 1 FROM pg_stat_activity WHERE query = 'LISTEN test_clock_advances' AND datname = current_database()`);
      return listening.length >= 1 ? true : undefined;
    }, 10_000, 'the workers listen again');
  });

  it('leaves accounts not on a clock on the wall: their holds and quotes keep the wall\'s time', async () => {
    const clock = await newClock(clockStart());
    await onClock(clock.id);
    const erin = await signUp(base());
    await fund(base(), erin.key, 'USD', '5.00');
    const before = Date.now();
    const made = await hold(erin, { amount: '1.00' });
    const expiresAt = Date.parse(made.expires_at);
    assert.ok(expiresAt >= before + 7 * DAY_MS - 1000 && expiresAt <= Date.now() + 7 * DAY_MS + 1000, made.expires_at);
    await advanced(master(), clock.id, clockStart().getTime() + 60 * DAY_MS);
    assert.equal((await readHold(erin, made.id)).status, 'active');
  });
});
