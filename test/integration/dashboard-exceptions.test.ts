// The reconciliation exceptions queue in the dashboard's Finance area, worked in Chromium as
// finance works it, on a service of its own (its day holds only what this test made): a day whose
// statement disagrees with the ledger (a missing line, a duplicate line, a fee) reconciled through
// the API; the queue filtered by partner, status, day and kind, and downloaded as CSV; a refused
// manual match shown in the API's words; one exception explained and one adjusted (its amount
// shown, then confirmed) from the keyboard alone, each checked in the API afterwards; a late
// adjustment asked again under its Idempotency-Key; an ambiguous exception (an uploaded line
// without reference that two pay-ins fit) opened, its candidate chosen and matched by hand from
// the keyboard, checked in the API afterwards. axe-core checks the queue, an open exception, an
// ambiguous one and the confirmation; every table of the Finance area fits its card at 1280 and
// 375 px.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { assertNoCspViolation, type DashboardWindow, expectPageAccessible, focusedName, openSignedInDashboard, screenshotOf, tabTo } from '../support/browser';
import { FinanceDesk, type SettledPayIn } from '../support/finance-desk';
import { call, eventually } from '../support/http';
import { daysAfter, today } from '../support/days';


interface Exception {
  id: string; category: string; reference: string | null; created_at: string; ledger_entry_id: string | null; status: string; resolution: string | null; note: string | null;
  resolved_by: string | null; adjustment_entry_id: string | null; counterpart_exception_id: string | null; statement_line_id: string | null; field: string | null;
}

describe('the reconciliation exceptions queue in the dashboard', function () {
  this.timeout(240_000);
  const desk = new FinanceDesk('dashboard_exceptions');
  const base = () => desk.service.baseUrl;
  const master = () => desk.service.config.masterKey;
  const paid: Record<string, SettledPayIn> = {};
  let opened: Exception[] = [];
  let dashboard: DashboardWindow | undefined;
  let page: Page;
  const exceptionOf = (name: string) => opened.find((e) => e.reference === paid[name].external_id && (e.category !== 'statement_only' || e.field === 'reference'))!;
  const read = async (id: string): Promise<Exception> => (await call(base(), 'GET', `/v1/reconciliation-exceptions/${id}`, undefined, { token: master() })).body;
  const queue = () => page.getByRole('region', { name: 'Exceptions', exact: true });
  const detail = () => page.getByRole('region', { name: /^Exception: / });
  const rows = () => queue().getByRole('region', { name: 'Exceptions list' }).getByRole('row');

  before(async () => {
    await desk.start({ PAYMENT_SETTLE_INTERVAL_MS: '100' }, () => undefined);
    paid.missing = await desk.settledPayIn('41.00', 'statement_missing');
    paid.twice = await desk.settledPayIn('43.00', 'statement_duplicate');
    paid.fee = await desk.settledPayIn('42.00', 'statement_fee');
    paid.stale = await desk.settledPayIn('44.00', 'statement_missing');
    const report = await call(base(), 'POST', '/v1/reconciliations', { partner: 'openbank', from: today(), to: today() }, { token: master() });
    assert.equal(report.status, 201, JSON.stringify(report.body));
    opened = (await call(base(), 'GET', '/v1/reconciliation-exceptions?status=open&limit=100', undefined, { token: master() })).body.data;
    assert.deepEqual(['missing', 'twice', 'fee', 'stale'].map((name) => exceptionOf(name)?.category), ['ledger_only', 'statement_only', 'mismatched', 'ledger_only'], JSON.stringify(opened));

    dashboard = await openSignedInDashboard(base(), desk.owner.email);
    page = dashboard.page;
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Finance', exact: true }).click();
    await page.getByLabel('Master key').fill(master());
  });
  after(async () => {
    await dashboard?.browser.close();
    await desk.stop();
    assertNoCspViolation(dashboard);
  });

  const expectAccessible = (what: string) => expectPageAccessible(page, what, { tablesFitCards: true });
  /** The focus lands on `name` (it moves once the page has drawn what it goes to). */
  const focused = (name: string | RegExp, what: string) => eventually(async () => {
    const now = await focusedName(page);
    return (typeof name === 'string' ? now === name : name.test(now)) ? now : undefined;
  }, 5_000, what);
  const rowCount = async (expected: number, what: string) => eventually(async () => {
    if (await queue().getByText('Loading…').isVisible()) return undefined;
    const shown = expected === 0 ? (await queue().getByText('No exceptions match these filters.').isVisible() ? 0 : -1) : (await rows().count()) - 1;
    return shown === expected ? shown : undefined;
  }, 10_000, `${what}: ${expected} exceptions listed`);

  it('lists the open exceptions, filtered by partner, status, day and kind, and as CSV', async () => {
    await rowCount(4, 'the open ones');
    for (const name of ['missing', 'twice', 'fee', 'stale']) {
      await rows().filter({ hasText: paid[name].external_id }).first().waitFor();
    }
    await expectAccessible('the exceptions queue');
    await queue().getByLabel('Exception partner').selectOption('fiat');
    await rowCount(0, 'fiat');
    await queue().getByLabel('Exception partner').selectOption('openbank');
    await rowCount(4, 'openbank');
    await queue().getByLabel('Raised on (UTC day)').fill(daysAfter(today(), 1));
    await rowCount(0, 'the day after');
    await queue().getByLabel('Raised on (UTC day)').fill(today());
    await rowCount(4, 'today');
    await queue().getByLabel('Exception status').selectOption('resolved');
    await rowCount(0, 'resolved');
    await queue().getByLabel('Exception status').selectOption('open');
    await rowCount(4, 'open again');
    await queue().getByLabel('Exception kind').selectOption('mismatched');
    await rowCount(1, 'mismatched');
    await rows().filter({ hasText: paid.fee.external_id }).waitFor();
    await queue().getByLabel('Exception kind').selectOption('');
    await rowCount(4, 'any kind');

    const download = queue().getByRole('button', { name: 'Download these exceptions (CSV)' });
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const csv = readFileSync(await file.path(), 'utf8');
    assert.equal(file.suggestedFilename(), `reconciliation-exceptions-${today()}.csv`);
    for (const name of ['missing', 'twice', 'fee']) assert.match(csv, new RegExp(paid[name].external_id));
  });

  it('shows an exception whole, and a refused manual match in the API\'s words, changing nothing', async () => {
    const missing = exceptionOf('missing');
    await queue().getByRole('button', { name: `Open the ledger_only exception ${paid.missing.external_id}` }).click();
    await detail().getByRole('heading', { name: `Exception: ledger_only ${paid.missing.external_id}` }).waitFor();
    await focused(`Exception: ledger_only ${paid.missing.external_id}`, 'opening it takes the reader to it');
    assert.match(await detail().getByRole('list', { name: 'Exception history' }).textContent() ?? '', /opened/);
    await detail().getByLabel(/Match by hand/).check();
    await detail().getByLabel('Statement line id of the other side').fill('no-such-line');
    await detail().getByLabel(/^Note/).fill('the partner says it is this line');
    await detail().getByRole('button', { name: 'Match', exact: true }).click();
    const refused = await call(base(), 'POST', `/v1/reconciliation-exceptions/${missing.id}/resolve`,
      { resolution: 'matched', note: 'the partner says it is this line', statement_line_id: 'no-such-line' }, { token: master(), idempotencyKey: randomUUID() });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    await detail().locator('#field-exception-other-side-error').filter({ hasText: refused.body.message }).waitFor();
    await expectAccessible('an open exception with a refused match');
    assert.equal((await read(missing.id)).status, 'open', 'nothing changed');
    await detail().getByRole('button', { name: 'Back to the queue' }).click();
    await focused(`Open the ledger_only exception ${paid.missing.external_id}`, 'back where the reader left the queue');
    assert.equal(await detail().count(), 0);
  });

  it('explains one exception from the keyboard alone', async () => {
    const twice = exceptionOf('twice');
    await page.locator('#field-exception-day').focus(); // a place in the queue to start from
    await tabTo(page, new RegExp(`^Open the statement_only exception ${paid.twice.external_id}`));
    await page.keyboard.press('Enter');
    await detail().getByRole('heading', { name: /^Exception: statement_only/ }).waitFor();
    await focused(/^Exception: statement_only/, 'the exception\'s heading focused');
    await tabTo(page, /^Explain \(a note; no money moves\)$/);
    await tabTo(page, /^Note/);
    await page.keyboard.type('the partner listed this payment twice and confirmed it');
    await tabTo(page, /^Explain$/);
    await page.keyboard.press('Enter');
    const said = detail().getByRole('status');
    await said.filter({ hasText: 'Resolved as explained.' }).waitFor();
    await focused('Resolved as explained.', 'the reader is told what happened');
    const after = await read(twice.id);
    assert.deepEqual([after.status, after.resolution, after.note, after.adjustment_entry_id], ['resolved', 'explained', 'the partner listed this payment twice and confirmed it', null]);
    assert.match(after.resolved_by ?? '', /^master_key$|^key:|^session:/);
    await rowCount(3, 'the explained one leaves the open list');
  });

  it('adjusts one from the keyboard: the amount to be posted is shown, then confirmed, and the ledger posts it once', async () => {
    const fee = exceptionOf('fee');
    await tabTo(page, new RegExp(`^Open the mismatched exception ${paid.fee.external_id}`), { back: true });
    await page.keyboard.press('Enter');
    await detail().getByRole('heading', { name: /^Exception: mismatched/ }).waitFor();
    await focused(/^Exception: mismatched/, 'the exception\'s heading focused');
    await tabTo(page, /^Explain \(a note; no money moves\)$/);
    await page.keyboard.press('ArrowDown'); // the radio group's next choice: Adjust
    assert.match(await focusedName(page), /^Adjust/);
    assert.equal(await detail().getByTestId('adjustment-amount').textContent(), '-0.50 USD', 'statement 41.50 − ledger 42.00');
    await tabTo(page, /^Note/);
    await page.keyboard.type('the partner\'s fee of 0.50 is ours to bear');
    await tabTo(page, /^Review the adjustment$/);
    await page.keyboard.press('Enter');
    await detail().getByRole('group', { name: 'Confirm the adjustment' }).waitFor();
    await focused('Confirm the adjustment', 'the confirmation step takes the focus');
    assert.equal((await read(fee.id)).status, 'open', 'nothing is posted before it is confirmed');
    await expectAccessible('the confirmation of an adjustment');
    await screenshotOf(detail(), 'finance-exception');
    await tabTo(page, /^Confirm the adjustment of -0\.50 USD$/);
    await page.keyboard.press('Enter');
    await detail().getByRole('status').filter({ hasText: /^Resolved as adjusted: the ledger posted -0\.50 USD/ }).waitFor();
    const after = await read(fee.id);
    assert.deepEqual([after.status, after.resolution, after.note], ['resolved', 'adjusted', 'the partner\'s fee of 0.50 is ours to bear']);
    assert.ok(after.adjustment_entry_id, 'an adjusting entry');
    const trial = await call(base(), 'GET', '/v1/ledger/trial-balance', undefined, { token: master() });
    assert.equal(trial.body.accounts.find((a: { ledger_account: string }) => a.ledger_account === 'sys:reconciliation:suspense:USD')?.net, '-0.50', 'posted once');
    await rowCount(2, 'the missing lines are left open');
  });

  it('opens an ambiguous exception, shows its candidates, and matches it from the keyboard with the candidate chosen', async () => {
    const line = await desk.ambiguousLine('46.00');
    await queue().getByLabel('Exception kind').selectOption('ambiguous');
    await rowCount(1, 'the ambiguous line');
    await page.locator('#field-exception-day').focus(); // a place in the queue to start from
    await tabTo(page, new RegExp(`^Open the ambiguous exception ${line.statementLineId}$`));
    await page.keyboard.press('Enter');
    const title = `Exception: ambiguous ${line.statementLineId}`;
    await detail().getByRole('heading', { name: title }).waitFor();
    await focused(title, 'the exception\'s heading focused');
    await detail().getByText('None on the ledger side.').waitFor();
    assert.equal(await detail().getByRole('region', { name: 'Statement lines' }).getByRole('row').count(), 2, 'a heading row and the line');
    assert.equal(await detail().getByRole('region', { name: 'Candidates' }).getByRole('row').count(), 3, 'a heading row and both pay-ins');
    assert.ok(await detail().getByLabel(/Match by hand/).isChecked(), 'an ambiguous exception is matched by hand first');

    await tabTo(page, /^ledger entry /);
    await page.keyboard.press('ArrowDown'); // the next candidate of the radio group, chosen
    const [, entry, reference] = /^ledger entry (\S+): (\S+),/.exec(await focusedName(page)) ?? [];
    const chosen = line.candidates.find((c) => c.ledgerEntryId === entry && c.external_id === reference)!;
    assert.ok(chosen, `the candidate focused is one of the two pay-ins: ${entry} ${reference}`);
    const other = line.candidates.find((c) => c !== chosen)!;
    assert.ok(await detail().getByLabel(new RegExp(`ledger entry ${entry}:`)).isChecked(), 'the candidate focused is the one chosen');
    await tabTo(page, /^Note/);
    const note = 'the bank named this payment';
    await page.keyboard.type(note);
    await expectAccessible('an ambiguous exception');
    await tabTo(page, /^Match$/);
    await page.keyboard.press('Enter');
    await detail().getByRole('status').filter({ hasText: 'Resolved as matched.' }).waitFor();
    await focused('Resolved as matched.', 'the reader is told what happened');
    assert.match(await detail().getByRole('list', { name: 'Exception history' }).textContent() ?? '', new RegExp(`resolved.*master_key: ${note} \\(matched with ledger entry ${entry}\\)`));

    const after = await read(line.exceptionId);
    assert.deepEqual([after.status, after.resolution, after.note, after.resolved_by, after.counterpart_exception_id], ['resolved', 'matched', note, 'master_key', chosen.exceptionId]);
    const chosenAlone = await read(chosen.exceptionId);
    assert.deepEqual([chosenAlone.status, chosenAlone.resolution, chosenAlone.counterpart_exception_id], ['resolved', 'matched', line.exceptionId], 'the chosen pay-in is no longer alone');
    assert.equal((await read(other.exceptionId)).status, 'open', 'the other pay-in stays alone');
    await rowCount(0, 'no ambiguous exception is left open');
    await queue().getByLabel('Exception kind').selectOption('');
    await rowCount(3, 'the missing lines and the pay-in not chosen are left open');
    await rows().filter({ hasText: other.external_id }).waitFor();
    await detail().getByRole('button', { name: 'Back to the queue' }).click();
  });

  it('shows an exception resolved meanwhile by someone else as it now is, in the API\'s words', async () => {
    const stale = exceptionOf('stale');
    await queue().getByRole('button', { name: `Open the ledger_only exception ${paid.stale.external_id}` }).click();
    await detail().getByRole('heading', { name: `Exception: ledger_only ${paid.stale.external_id}` }).waitFor();
    await detail().getByLabel(/^Note/).fill('explained here too');
    const elsewhere = await call(base(), 'POST', `/v1/reconciliation-exceptions/${stale.id}/resolve`, { resolution: 'explained', note: 'explained by a colleague' }, { token: master(), idempotencyKey: randomUUID() });
    assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.body));
    await detail().getByRole('button', { name: 'Explain', exact: true }).click();
    const refused = await call(base(), 'POST', `/v1/reconciliation-exceptions/${stale.id}/resolve`, { resolution: 'explained', note: 'explained here too' }, { token: master(), idempotencyKey: randomUUID() });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    await detail().getByRole('status').filter({ hasText: refused.body.message }).waitFor();
    await detail().getByTestId('exception-status').filter({ hasText: 'resolved: explained' }).waitFor();
    assert.equal((await read(stale.id)).note, 'explained by a colleague', 'the first resolution stands');
    await detail().getByRole('button', { name: 'Back to the queue' }).click();
  });

  it('asks again with the same Idempotency-Key when an adjustment\'s answer is late, and shows the API\'s words meanwhile', async () => {
    const missing = exceptionOf('missing');
    const keys: string[] = [];
    const late = { success: false, error: 'service_unavailable', message: 'the ledger has not posted the adjustment yet; repeat the request with the same Idempotency-Key', details: 'ledger' };
    // The first answer is lost on its way back (answered here as the route does when the ledger is late); the retry reaches the service.
    await page.route(`**/v1/reconciliation-exceptions/${missing.id}/resolve`, (route) => {
      keys.push(route.request().headers()['idempotency-key']);
      return keys.length === 1 ? route.fulfill({ status: 503, json: late, headers: { 'Retry-After': '2' } }) : route.continue();
    });
    try {
      await queue().getByRole('button', { name: `Open the ledger_only exception ${paid.missing.external_id}` }).click();
      await detail().getByRole('heading', { name: `Exception: ledger_only ${paid.missing.external_id}` }).waitFor();
      await detail().getByLabel(/Adjust \(the ledger/).check();
      assert.equal(await detail().getByTestId('adjustment-amount').textContent(), '-41.00 USD', 'no line: statement 0 − ledger 41.00');
      await detail().getByLabel(/^Note/).fill('the partner never paid this one: written off');
      await detail().getByRole('button', { name: 'Review the adjustment' }).click();
      const confirm = detail().getByRole('button', { name: 'Confirm the adjustment of -41.00 USD' });
      await confirm.click();
      await detail().getByRole('alert').filter({ hasText: late.message }).waitFor();
      assert.equal((await read(missing.id)).status, 'open');
      await confirm.click();
      await detail().getByRole('status').filter({ hasText: /^Resolved as adjusted: the ledger posted -41\.00 USD/ }).waitFor();
    } finally {
      await page.unroute(`**/v1/reconciliation-exceptions/${missing.id}/resolve`);
    }
    assert.equal(keys.length, 2);
    assert.equal(keys[1], keys[0], 'the retry repeats the request under its key');
    const after = await read(missing.id);
    assert.deepEqual([after.status, after.resolution], ['resolved', 'adjusted']);
    assert.ok(after.adjustment_entry_id);
  });

  for (const width of [1280, 375]) {
    it(`fits every table of the Finance area in its card at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 });
      const statement = page.getByRole('region', { name: 'Statement', exact: true });
      await statement.getByRole('button', { name: 'Show statement' }).click();
      await statement.getByRole('region', { name: 'Statement lines' }).waitFor();
      await page.getByRole('region', { name: 'Trial balance' }).getByRole('button', { name: 'Show trial balance' }).click();
      await page.getByRole('region', { name: 'Trial balance totals' }).waitFor();
      if (width === 1280) await page.getByText(/The service's own accounts/).click(); // it stays open
      const reports = page.getByRole('region', { name: 'Reconciliation reports list' });
      await reports.getByRole('button', { name: /^Open the openbank report/ }).first().click();
      await page.getByRole('region', { name: 'Totals per currency' }).waitFor();
      await queue().getByLabel('Exception status').selectOption('');
      await rowCount(7, 'every status'); // the four of the day, the ambiguous line and its two pay-ins
      await queue().getByRole('button', { name: `Open the mismatched exception ${paid.fee.external_id}` }).click();
      await detail().getByRole('region', { name: 'Statement lines' }).waitFor();
      await expectAccessible(`the Finance area at ${width} px`);
      if (width === 375) await screenshotOf(queue(), 'finance-queue-375');
    });
  }
});
