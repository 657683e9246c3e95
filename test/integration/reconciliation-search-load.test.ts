// The API keeps answering while a reconciliation searches (DESIGN.md section 5e; issue 39): the
// search for sets of movements adding up to a line without reference is exponential, bounded by
// the run's budget, and runs in a worker thread, so a statement of many lines nothing explains
// costs its run seconds but never holds up anyone else's request. On a service of its own, so
// that its day holds only the pay-ins this test made.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { FinanceDesk } from '../support/finance-desk';
import { call } from '../support/http';
import { today } from '../support/days';

/** Pay-ins of 2.00, 4.00 … 80.00 USD: even amounts, so no set of them adds up to an odd one. */
const MOVEMENTS = 40;
/** Lines of odd amounts without reference: each a hopeless search; together several seconds of it. */
const LINES = 60_000;
/** A cheap call made this often while the run goes on. */
const POLL_EVERY_MS = 50;
/** Slower than this, a call waited on something other than itself (tens of ms alone, up to about 550 ms beside other work on two cores; a search on the event loop held calls 4.5 s of a 6.3 s run). */
const CALL_MS_MAX = 1_500;
/** A run shorter than this would not show a blocked event loop as a slow call. */
const RUN_MS_MIN = 3_000;

describe('a heavy reconciliation search leaves the API answering @system', function () {
  this.timeout(180_000);
  const desk = new FinanceDesk('search_load');
  const base = () => desk.service.baseUrl;

  before(async () => {
    await desk.start({}, () => undefined);
    // Two at a time: each waits by asking for its payment every 25 ms with the owner's key, and
    // more would pass the key's 100 requests a second.
    for (let from = 0; from < MOVEMENTS; from += 2) {
      await Promise.all([from, from + 1].map((i) => desk.settledPayIn(`${(i + 1) * 2}.00`)));
    }
  });
  after(() => desk.stop());

  /**
   * GET /v1/accounts/me every POLL_EVERY_MS until `running` settles: how long each call took. The
   * client shares the service's process (FinanceDesk), so a call is timed from when it was due,
   * not from when the event loop got round to sending it: a loop held up while the client sleeps
   * shows as a late call, as it would to a client of its own.
   */
  async function pollWhile(running: Promise<unknown>): Promise<Array<{ status: number; ms: number }>> {
    let done = false;
    running.then(() => { done = true; }, () => { done = true; });
    const calls: Array<{ status: number; ms: number }> = [];
    let due = performance.now();
    while (!done) {
      const answer = await call(base(), 'GET', '/v1/accounts/me', undefined, { token: desk.owner.key });
      const answered = performance.now();
      calls.push({ status: answer.status, ms: Math.round(answered - due) });
      due = answered + POLL_EVERY_MS;
      await sleep(POLL_EVERY_MS);
    }
    return calls;
  }

  it('answers every call within a second while the run searches for seconds, and matches none of the hopeless lines', async () => {
    const day = today();
    const csv = ['id,reference,amount,currency,value_date', ...Array.from({ length: LINES }, (_, i) => `line-${i},,${401 + 2 * (i % 400)}.00,USD,${day}`)].join('\n');
    await call(base(), 'GET', '/v1/accounts/me', undefined, { token: desk.owner.key }); // the client's first call reads the API's description once

    // A dry run searches as a stored run does, without storing 60,000 exceptions and announcing each.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const started = performance.now();
    const run = call(base(), 'POST', '/v1/reconciliations', { partner: 'openbank', from: day, to: day, dry_run: true, statement_csv: `${csv}\n` }, { token: desk.service.config.masterKey });
    const calls = await pollWhile(run);
    const report = await run;
    const runMs = Math.round(performance.now() - started);
    loop.disable();

    assert.equal(report.status, 200, JSON.stringify(report.body).slice(0, 2_000));
    const slowest = Math.max(...calls.map((c) => c.ms));
    const figures = `run ${runMs} ms, ${calls.length} calls, slowest ${slowest} ms, the event loop held at most ${Math.round(loop.max / 1e6)} ms`;
    console.log(`      ${LINES} hopeless lines, ${MOVEMENTS} movements: ${figures}, ${report.body.not_examined} lines not examined`);
    assert.ok(runMs > RUN_MS_MIN, `the search is heavy enough to show a blocked event loop: ${figures}`);
    assert.deepEqual(calls.filter((c) => c.status !== 200), [], `every call answered: ${figures}`);
    assert.ok(slowest < CALL_MS_MAX, `no call waited on the search: ${figures}`);
    assert.ok(calls.length >= runMs / (CALL_MS_MAX + POLL_EVERY_MS), `the calls went on throughout the run: ${figures}`);

    // Never wrong, only unsure: every line alone (its search finished empty, or not_examined), and
    // every pay-in unsure, as a line not examined may settle it (its candidates name some of them).
    const { summary, not_examined: notExamined, items, items_omitted: omitted } = report.body;
    assert.deepEqual(summary, { matched: 0, ledger_only: 0, statement_only: LINES, mismatched: 0, ambiguous: MOVEMENTS, batch: 0 });
    assert.ok(notExamined > 0 && notExamined <= LINES, `the budget cut the search short: ${notExamined} lines not examined`);
    assert.equal(items.length + omitted, MOVEMENTS + LINES);
    for (const item of items) {
      assert.equal(item.category, item.statement_line_id === null ? 'ambiguous' : 'statement_only', JSON.stringify(item).slice(0, 500));
      if (item.category === 'ambiguous') assert.ok(/did not examine/.test(item.reason) && item.candidates.length > 0 && item.candidates.length <= 64, JSON.stringify(item).slice(0, 500));
    }
  });
});
