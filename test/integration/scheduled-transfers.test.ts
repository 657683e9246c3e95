// Scheduled transfers (DESIGN.md section 5i) against the running service: made, read, listed and
// cancelled; refused before anything is stored when a field is wrong; each occurrence run as one
// transfer decided by the ledger, however the worker beside it stops, crashes, restarts or races
// another; a refused run recorded and the schedule going on; a cancel racing a run with one
// outcome; a schedule written while the worker sleeps run at its instant. The test service's day lasts a second (test/support/service.ts), so daily schedules run
// within a test.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sendBatches } from '../../src/kafka/send-batches';
import { TOPICS } from '../../src/kafka/topics';
import { claimDueOccurrences, runTransferId, workWaiting } from '../../src/scheduled-transfers/runs';
import { db, testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectCredentialRules } from '../support/access';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { balances, fund } from '../support/money';
import { restartLedger, startService, type TestService } from '../support/service';
import { openEventStream } from '../support/sse';
import { startReceiver } from '../support/webhook-receiver';

const base = () => testService().baseUrl;
const DAY_MS = 1_000; // the test service's day (SCHEDULED_TRANSFER_DAY_MS)

const schedule = (key: string, body: unknown, idempotencyKey = randomUUID()) => call(base(), 'POST', '/v1/scheduled-transfers', body, { token: key, idempotencyKey });
const read = (key: string, id: string) => call(base(), 'GET', `/v1/scheduled-transfers/${id}`, undefined, { token: key });
const cancel = (key: string, id: string, idempotencyKey = randomUUID()) => call(base(), 'POST', `/v1/scheduled-transfers/${id}/cancel`, undefined, { token: key, idempotencyKey });
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const pay = (to: SignedUp, amount = '1.00') => ({ recipient_email: to.email, amount, currency: 'USD' });
const sleepUntil = (at: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

async function made(key: string, body: unknown): Promise<any> {
  const answer = await schedule(key, body);
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  return answer.body;
}

/** The schedule once it has `count` runs, each decided by the ledger. */
function decided(key: string, id: string, count: number, timeoutMs = 30_000): Promise<any> {
  return eventually(async () => {
    const { body } = await read(key, id);
    return body.runs.length >= count && body.runs.every((run: any) => run.status !== 'pending') ? body : undefined;
  }, timeoutMs, `${count} decided runs of ${id}`);
}

/** Every transfer the account sent, oldest first. */
async function transfersOf(key: string): Promise<any[]> {
  const answer = await call(base(), 'GET', '/v1/transfers?limit=200', undefined, { token: key });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.has_more, false);
  return [...answer.body.data].reverse();
}

/** The account's scheduled_transfer.run events, in its sequence. */
async function runEvents(accountId: string): Promise<any[]> {
  const rows = await db()('account_events').where('account_id', accountId).orderBy('account_seq').select('payload');
  return rows.map((r: { payload: any }) => r.payload).filter((e: any) => e.type === 'scheduled_transfer.run')
    .map((e: any) => ({ ...e, attributes: JSON.parse(e.data.attributes) }));
}

/** What each occurrence of the account's schedules made: one transfer each, none besides. */
async function assertOneTransferPerRun(sender: SignedUp, schedules: any[]): Promise<void> {
  const runs = schedules.flatMap((s) => s.runs.map((run: any) => ({ ...run, schedule: s.id })));
  const sent = await transfersOf(sender.key);
  assert.deepEqual(sent.map((t) => t.transfer_id).sort(), runs.filter((r) => r.status === 'created').map((r) => r.transfer_id).sort(), 'one transfer per created run, none besides');
  for (const run of runs) assert.equal(run.transfer_id ?? runTransferId(run.schedule, run.occurrence), runTransferId(run.schedule, run.occurrence));
  const events = await runEvents(sender.account.id);
  assert.deepEqual(events.map((e) => `${e.resource_id} ${e.attributes.occurrence} ${e.data.status}`).sort(), runs.map((r) => `${r.schedule} ${r.occurrence} ${r.status}`).sort(), 'one event per run');
}

/** Stops the shared service's ledger (and the worker beside it) for `work`, and starts it again after, whatever happens. */
async function withLedgerStopped(work: (restart: () => Promise<void>) => Promise<void>): Promise<void> {
  const service = testService();
  const index = service.roles.findIndex((r) => r.role === 'ledger');
  await service.roles[index].stop();
  let running = false;
  const restart = async () => {
    service.roles[index] = await restartLedger(service);
    running = true;
  };
  try {
    await work(restart);
  } finally {
    if (!running) await restart();
  }
}

describe('scheduled transfers', () => {
  let sender: SignedUp;
  let recipient: SignedUp;
  beforeEach(async () => {
    [sender, recipient] = await Promise.all([signUp(base()), signUp(base())]);
  });

  it('makes, reads, lists and cancels a schedule; the same key answers the same schedule', async () => {
    const body = { transfer: { ...pay(recipient, '12.5'), note: 'rent' }, run_at: inMs(3_600_000), repeat: { every: 'week', count: 4 } };
    const key = randomUUID();
    const first = await schedule(sender.key, body, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const created = first.body;
    assert.deepEqual({ ...created, id: undefined, created_at: undefined, updated_at: undefined }, {
      id: undefined, status: 'scheduled', transfer: { ...body.transfer, amount: '12.50' }, run_at: body.run_at, next_run_at: body.run_at,
      repeat: { every: 'week', count: 4 }, runs: [], created_at: undefined, updated_at: undefined, cancelled_at: null,
    });
    const again = await schedule(sender.key, body, key);
    assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body], [200, 'true', created], 'the same key answers the same schedule');
    expectError(await schedule(sender.key, { ...body, repeat: { every: 'week', count: 5 } }, key), 409, 'idempotency_conflict');

    assert.deepEqual((await read(sender.key, created.id)).body, created);
    const list = async (query = '') => (await call(base(), 'GET', `/v1/scheduled-transfers${query}`, undefined, { token: sender.key })).body;
    const other = await made(sender.key, { transfer: pay(recipient), run_at: inMs(7_200_000) });
    assert.deepEqual((await list()).data.map((s: any) => s.id), [other.id, created.id], 'newest first');
    assert.deepEqual((await list('?limit=1')).next_cursor, other.id);
    assert.deepEqual((await list(`?limit=1&before=${other.id}`)).data.map((s: any) => s.id), [created.id]);

    const cancelled = await cancel(sender.key, created.id);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.deepEqual([cancelled.body.status, cancelled.body.next_run_at, typeof cancelled.body.cancelled_at], ['cancelled', null, 'string']);
    const twice = await cancel(sender.key, created.id);
    assert.deepEqual([twice.status, twice.body], [200, cancelled.body], 'cancelling twice changes nothing');
    assert.deepEqual((await list('?status=cancelled')).data.map((s: any) => s.id), [created.id]);
    assert.deepEqual((await list('?status=scheduled')).data.map((s: any) => s.id), [other.id]);

    const stranger = await signUp(base());
    expectError(await read(stranger.key, created.id), 403, 'cross_account_access_denied');
    expectError(await cancel(stranger.key, other.id), 403, 'cross_account_access_denied');
    expectError(await read(sender.key, randomUUID()), 404, 'scheduled_transfer_not_found');
    assert.equal((await read(sender.key, other.id)).body.status, 'scheduled', 'another account\'s cancel changed nothing');
  });

  it('answers the credential rules of transfers: transfers:write to make and cancel, transfers:read to read', async () => {
    const id = (await made(sender.key, { transfer: pay(recipient), run_at: inMs(3_600_000) })).id;
    await expectCredentialRules(base(), sender, 'transfers', 'payments:read', [
      ['POST', '/v1/scheduled-transfers', { transfer: pay(recipient), run_at: inMs(3_600_000) }, 'write'],
      ['GET', '/v1/scheduled-transfers', undefined, 'read'], ['GET', `/v1/scheduled-transfers/${id}`, undefined, 'read'],
      ['POST', `/v1/scheduled-transfers/${id}/cancel`, undefined, 'write'],
    ]);
    assert.equal((await read(sender.key, id)).body.status, 'scheduled', 'no refused cancel changed it');
  });

  it('refuses a wrong field with a 400 naming it, in order of precedence, and stores nothing', async () => {
    const good = { transfer: pay(recipient), run_at: inMs(60_000) };
    const bank = { email: recipient.email, name: 'R', bank: { country: 'DE', bank_name: 'Bank', account_number: 'DE89370400440532013000', currency: 'EUR' } };
    const table: Array<[what: string, body: unknown, code: string, details: string]> = [
      ['no transfer', { run_at: good.run_at }, 'invalid_request', 'transfer'],
      ['no run_at', { transfer: good.transfer }, 'invalid_request', 'run_at'],
      ['an unknown field', { ...good, every: 'day' }, 'invalid_request', 'every'],
      ['no amount', { ...good, transfer: { recipient_email: recipient.email, currency: 'USD' } }, 'invalid_request', 'transfer.amount'],
      ['an amount past the scale', { ...good, transfer: pay(recipient, '1.001') }, 'invalid_request', 'transfer.amount'],
      ['an amount as a number', { ...good, transfer: { ...good.transfer, amount: 1 } }, 'invalid_request', 'transfer.amount'],
      ['an unknown currency', { ...good, transfer: { ...good.transfer, currency: 'XYZ' } }, 'invalid_currency', 'transfer.currency'],
      ['no recipient', { ...good, transfer: { amount: '1.00', currency: 'USD' } }, 'invalid_request', 'transfer.recipient_email'],
      ['both recipients', { ...good, transfer: { ...good.transfer, recipient: bank } }, 'invalid_request', 'transfer.recipient'],
      ['a pair without a rate', { ...good, transfer: { amount: '1.000000', currency: 'USDC', recipient: bank } }, 'unsupported_pair', 'transfer.recipient.bank.currency'],
      ['run_at not an instant', { ...good, run_at: 'tomorrow' }, 'invalid_request', 'run_at'],
      ['run_at in the past', { ...good, run_at: inMs(-3_600_000) }, 'invalid_request', 'run_at'],
      ['run_at more than a year ahead', { ...good, run_at: inMs(367 * 86_400_000) }, 'invalid_request', 'run_at'],
      ['repeat without count', { ...good, repeat: { every: 'day' } }, 'invalid_request', 'repeat.count'],
      ['repeat every year', { ...good, repeat: { every: 'year', count: 2 } }, 'invalid_request', 'repeat.every'],
      ['no run at all', { ...good, repeat: { every: 'day', count: 0 } }, 'invalid_request', 'repeat.count'],
      ['more than 120 runs', { ...good, repeat: { every: 'month', count: 121 } }, 'invalid_request', 'repeat.count'],
    ];
    for (const [what, body, code, details] of table) expectError(await schedule(sender.key, body), 400, code, details, what);
    const stored = await db()('scheduled_transfers').where('account_id', sender.account.id).count({ n: '*' }).first();
    assert.equal(Number(stored!.n), 0, 'nothing stored');
  });

  it('runs a one-shot schedule once at its time: one transfer, completed', async () => {
    await fund(base(), sender.key, 'USD', '20.00');
    const runAt = inMs(2_000);
    const { id } = await made(sender.key, { transfer: { ...pay(recipient, '7.25'), note: 'once' }, run_at: runAt });
    const done = await decided(sender.key, id, 1);
    assert.deepEqual([done.status, done.next_run_at, done.runs.length], ['completed', null, 1]);
    const [run] = done.runs;
    assert.deepEqual([run.occurrence, run.scheduled_for, run.status, run.error, run.transfer_id], [1, runAt, 'created', null, runTransferId(id, 1)]);
    assert.ok(Date.parse(run.run_at) >= Date.parse(runAt), `ran at ${run.run_at}, not before ${runAt}`);
    const sent = await transfersOf(sender.key);
    assert.deepEqual(sent.map((t) => [t.transfer_id, t.status, t.amount, t.note]), [[run.transfer_id, 'completed', '7.25', 'once']]);
    assert.equal((await balances(base(), recipient.token)).USD.available, '7.25');
    expectError(await cancel(sender.key, id), 409, 'scheduled_transfer_completed');
  });

  it('wakes the worker for a schedule written while it sleeps with nothing due: run at its instant, not at the worker\'s next idle look (30 s)', async () => {
    await fund(base(), sender.key, 'USD', '20.00');
    // A first schedule run and decided: the worker has nothing left to do, and sleeps.
    const first = await made(sender.key, { transfer: pay(recipient, '1.00'), run_at: inMs(500) });
    await decided(sender.key, first.id, 1);
    await eventually(async () => {
      const waiting = await workWaiting(db(), new Date(Date.now() + 30_000));
      return waiting.due || waiting.pending ? undefined : true;
    }, 20_000, 'no run waiting for the ledger, nothing due in the next 30 s');
    await sleepUntil(Date.now() + 1_000);
    const runAt = inMs(1_000);
    const second = await made(sender.key, { transfer: pay(recipient, '2.00'), run_at: runAt });
    const done = await decided(sender.key, second.id, 1);
    const lateMs = Date.parse(done.runs[0].run_at) - Date.parse(runAt);
    assert.ok(lateMs >= 0 && lateMs < 5_000, `ran ${lateMs} ms after its instant`);
    assert.equal((await balances(base(), recipient.token)).USD.available, '3.00');
  });

  it('runs a daily schedule count times, one step apart, then completes', async () => {
    await fund(base(), sender.key, 'USD', '20.00');
    const runAt = inMs(1_000);
    const { id } = await made(sender.key, { transfer: pay(recipient, '2.00'), run_at: runAt, repeat: { every: 'day', count: 3 } });
    const done = await decided(sender.key, id, 3);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.runs.map((r: any) => [r.occurrence, r.scheduled_for, r.status]),
      [1, 2, 3].map((n) => [n, new Date(Date.parse(runAt) + (n - 1) * DAY_MS).toISOString(), 'created']));
    await assertOneTransferPerRun(sender, [done]);
    assert.equal((await balances(base(), recipient.token)).USD.available, '6.00');
  });

  it('records a run the ledger refuses (insufficient_funds) with its error, goes on to the next, and announces every run (event list, stream, webhook)', async () => {
    await fund(base(), sender.key, 'USD', '10.00');
    const receiver = await startReceiver();
    const stream = await openEventStream(base(), sender.token);
    try {
      const endpoint = await call(base(), 'POST', '/v1/webhooks', { url: receiver.url, events: ['scheduled_transfer.run'] }, { token: sender.key, idempotencyKey: randomUUID() });
      assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
      const { id } = await made(sender.key, { transfer: pay(recipient, '6.00'), run_at: inMs(500), repeat: { every: 'day', count: 3 } });
      const done = await decided(sender.key, id, 3);
      assert.deepEqual(done.runs.map((r: any) => [r.status, r.error?.error ?? null]), [['created', null], ['refused', 'insufficient_funds'], ['refused', 'insufficient_funds']]);
      assert.deepEqual([done.runs[1].transfer_id, done.runs[1].error.success, typeof done.runs[1].error.message], [null, false, 'string']);
      assert.equal(done.status, 'completed', 'a refusal does not end the schedule');
      await assertOneTransferPerRun(sender, [done]);

      const listed = await call(base(), 'GET', '/v1/events?type=scheduled_transfer.run', undefined, { token: sender.key });
      const events = [...listed.body.data].reverse();
      assert.deepEqual(events.map((e: any) => [e.resource_type, e.resource_id, e.data.status, e.data.amount, e.data.currency]),
        done.runs.map((r: any) => ['scheduled_transfer', id, r.status, '6.00', 'USD']));
      assert.deepEqual(events.map((e: any) => JSON.parse(e.data.attributes)), done.runs.map((r: any) => ({
        scheduled_transfer_id: id, occurrence: r.occurrence, scheduled_for: r.scheduled_for, run_at: r.run_at, transfer_id: r.transfer_id, error: r.error,
      })));
      const delivered = await receiver.waitFor(3, (r) => r.event.type === 'scheduled_transfer.run');
      assert.deepEqual(delivered.map((r) => r.event.id).sort(), events.map((e: any) => e.id).sort(), 'each run delivered to the webhook');
      const streamed: any[] = [];
      while (streamed.length < 3) {
        const frame = await stream.nextEvent(20_000);
        if (frame.event === 'scheduled_transfer.run') streamed.push(JSON.parse(frame.data));
      }
      assert.deepEqual(streamed.map((e) => [e.id, e.data.occurrence, e.data.status, e.data.error?.error ?? null]),
        events.map((e: any) => [e.id, JSON.parse(e.data.attributes).occurrence, e.data.status, e.data.status === 'refused' ? 'insufficient_funds' : null]), 'each run on the event stream');
    } finally {
      stream.close();
      await receiver.close();
    }
  });

  it('runs each occurrence missed while the ledger was down once, in order, when it is back, and records when each ran', async function () {
    this.timeout(120_000);
    await fund(base(), sender.key, 'USD', '20.00');
    await withLedgerStopped(async (restart) => {
      const runAt = inMs(500);
      const { id } = await made(sender.key, { transfer: pay(recipient), run_at: runAt, repeat: { every: 'day', count: 3 } });
      await sleepUntil(Date.parse(runAt) + 2 * DAY_MS + 300); // every occurrence falls due while no worker runs
      const back = Date.now();
      await restart();
      const done = await decided(sender.key, id, 3);
      assert.deepEqual(done.runs.map((r: any) => [r.occurrence, r.status]), [[1, 'created'], [2, 'created'], [3, 'created']]);
      for (const run of done.runs) assert.ok(Date.parse(run.run_at) >= back, `occurrence ${run.occurrence} ran at ${run.run_at}, when the worker was back, not at ${run.scheduled_for}`);
      const ranAt = done.runs.map((r: any) => Date.parse(r.run_at));
      assert.deepEqual(ranAt, [...ranAt].sort((a, b) => a - b), 'in order');
      await assertOneTransferPerRun(sender, [done]);
      const created = await Promise.all(done.runs.map(async (r: any) => Date.parse((await call(base(), 'GET', `/v1/transfers/${r.transfer_id}`, undefined, { token: sender.key })).body.created_at)));
      assert.deepEqual(created, [...created].sort((a, b) => a - b), 'the ledger decided them in order');
    });
  });

  it('makes one transfer per occurrence when a worker died after claiming it, before or after sending its transfer', async function () {
    this.timeout(120_000);
    await fund(base(), sender.key, 'USD', '20.00');
    await withLedgerStopped(async (restart) => {
      const runAt = inMs(200);
      const sentBeforeDying = await made(sender.key, { transfer: pay(recipient), run_at: runAt });
      const diedBeforeSending = await made(sender.key, { transfer: pay(recipient), run_at: runAt });
      await sleepUntil(Date.parse(runAt) + 100);
      // What a worker does before it dies: both occurrences claimed, one transfer sent.
      const { runtime } = testService();
      const claimed = (await claimDueOccurrences(runtime.db, new Date(), DAY_MS, 100)).filter((c) => c.account_id === sender.account.id);
      assert.equal(claimed.length, 2);
      const sent = claimed.filter((c) => c.id.includes(sentBeforeDying.id));
      const messages = await Promise.all(sent.map(async (c) => ({ key: c.account_id, value: await runtime.codec.encode(TOPICS.ledgerCommands, c) })));
      await sendBatches(runtime.producer, [{ topic: runtime.names.full(TOPICS.ledgerCommands), messages }]);
      for (const { id } of [sentBeforeDying, diedBeforeSending]) {
        const pending = (await read(sender.key, id)).body;
        assert.deepEqual([pending.status, pending.runs.map((r: any) => r.status)], ['completed', ['pending']], 'claimed: its run is pending');
      }
      // A worker comes back: it records what the ledger decides, and sends again what it has not decided.
      await restart();
      const done = await Promise.all([sentBeforeDying, diedBeforeSending].map(({ id }) => decided(sender.key, id, 1)));
      for (const schedule of done) assert.deepEqual(schedule.runs.map((r: any) => r.status), ['created']);
      await assertOneTransferPerRun(sender, done);
    });
  });

  it('makes one transfer per occurrence while two more service processes race on the due runs', async function () {
    this.timeout(180_000);
    // Two more workers beside the shared service's, sending again every run not decided within 100 ms.
    const racing = { ROLES: 'ledger', SCHEDULED_RUNS_SWEEP_MS: '50', SCHEDULED_RUN_RESEND_AFTER_MS: '100' };
    const others: TestService[] = [];
    try {
      others.push(...await Promise.all([startService(racing), startService(racing)]));
      const senders = [sender, await signUp(base())];
      await Promise.all(senders.map((s) => fund(base(), s.key, 'USD', '50.00')));
      const runAt = inMs(1_500);
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => made(senders[i % 2].key, { transfer: pay(recipient), run_at: runAt, repeat: { every: 'day', count: 3 } })
        .then((s) => ({ id: s.id, owner: senders[i % 2] }))));
      const done = await Promise.all(ids.map(({ id, owner }) => decided(owner.key, id, 3, 60_000).then((s) => ({ schedule: s, owner }))));
      for (const { schedule: s } of done) assert.deepEqual(s.runs.map((r: any) => [r.occurrence, r.status]), [[1, 'created'], [2, 'created'], [3, 'created']]);
      for (const owner of senders) await assertOneTransferPerRun(owner, done.filter((d) => d.owner === owner).map((d) => d.schedule));
      assert.equal((await balances(base(), recipient.token)).USD.available, '30.00');
    } finally {
      await Promise.all(others.map((s) => s.stop()));
    }
  });

  it('gives a cancel racing a run one outcome: the run happened and is kept, or it never happens', async function () {
    this.timeout(120_000);
    await fund(base(), sender.key, 'USD', '50.00');
    const due = Date.now() + 2_000;
    const schedules = await Promise.all(Array.from({ length: 12 }, (_, i) => made(sender.key, {
      transfer: pay(recipient), run_at: new Date(due).toISOString(), ...(i % 2 === 1 ? { repeat: { every: 'day', count: 2 } } : {}),
    })));
    // Cancels spread around the instant the first runs fall due, 25 ms apart.
    const answers = await Promise.all(schedules.map(async (s, i) => {
      await sleepUntil(due - 150 + i * 25);
      return { schedule: s, answer: await cancel(sender.key, s.id) };
    }));
    // A later schedule of another account has run: every worker's sweep has passed the racing runs.
    const other = await signUp(base());
    await fund(base(), other.key, 'USD', '1.00');
    const later = await made(other.key, { transfer: pay(recipient), run_at: new Date(due + 2 * DAY_MS).toISOString() });
    await decided(other.key, later.id, 1);

    const finals = await Promise.all(schedules.map((s) => decided(sender.key, s.id, 0)));
    answers.forEach(({ schedule: s, answer }, i) => {
      const final = finals[i];
      if (answer.status === 409) {
        expectError(answer, 409, 'scheduled_transfer_completed');
        assert.deepEqual([final.status, final.runs.length], ['completed', s.repeat?.count ?? 1], 'every run had run before the cancel');
        return;
      }
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(final.status, 'cancelled');
      assert.deepEqual(final.runs.map((r: any) => r.occurrence), answer.body.runs.map((r: any) => r.occurrence), 'no run after the cancel, none of those before it lost');
    });
    await assertOneTransferPerRun(sender, finals);
  });
});
