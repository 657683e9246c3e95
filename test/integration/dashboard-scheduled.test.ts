// The dashboard's scheduled transfers, walked in Chromium from the keyboard against the real
// service: the Send form's optional schedule (a first run a few seconds ahead, every day, two runs:
// the test service's day lasts a second), the Scheduled list showing the next run and each run's
// outcome as the API has it (a refused run in the API's words), a schedule cancelled from its
// button, and a first run in the past refused next to its field. axe-core on each, every table
// fitting its card at 1280 and 375 px.
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { closeDashboardWindow, type DashboardWindow, expectPageAccessible, openSignedInDashboard, screenshot, tablesOverflowingCards, tabTo } from '../support/browser';
import { call, eventually } from '../support/http';
import { fund } from '../support/money';

describe('the dashboard\'s scheduled transfers in a browser', function () {
  this.timeout(120_000);
  const base = () => testService().baseUrl;
  let dashboard: DashboardWindow | undefined;
  let page: Page;
  let owner: SignedUp;
  let friend: SignedUp;

  before(async () => {
    [owner, friend] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), owner.key, 'USD', '20.00');
    dashboard = await openSignedInDashboard(base(), owner.email);
    page = dashboard.page;
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: 'Transfers', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Transfers', exact: true }).waitFor();
  });
  after(() => closeDashboardWindow(dashboard));

  const send = () => page.getByRole('region', { name: 'Send' });
  const scheduled = () => page.getByRole('region', { name: 'Scheduled transfers' });
  const schedules = async () => (await call(base(), 'GET', '/v1/scheduled-transfers', undefined, { token: owner.key })).body.data;
  /**
   * No serious or critical accessibility violation, nothing wider than the window, and the
   * Scheduled table inside its card (the Transfers list beside it scrolls sideways by design).
   */
  const expectAccessible = async (what: string) => {
    await expectPageAccessible(page, what);
    assert.deepEqual((await tablesOverflowingCards(page)).filter((name) => name.startsWith('Scheduled')), [], `${what}: the Scheduled table fits its card`);
  };
  /**
   * `ms` from now as a datetime-local input takes it: the browser's own time, to the second, in the
   * input's own form (no seconds when they are zero: the browser writes 12:27:00 as 12:27, and a fill
   * of the other form is refused as malformed, one run in sixty).
   */
  const localIn = (ms: number) => page.evaluate((offset) => {
    const at = new Date(Date.now() + offset);
    const two = (n: number) => String(n).padStart(2, '0');
    const seconds = at.getSeconds() === 0 ? '' : `:${two(at.getSeconds())}`;
    return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}T${two(at.getHours())}:${two(at.getMinutes())}${seconds}`;
  }, ms);

  /** Fills the Send form from the keyboard: recipient, amount, the first run and the repeat, then presses Schedule. */
  async function scheduleFromKeyboard(amount: string, runAt: string, repeat?: { label: string; count: string }): Promise<void> {
    await send().getByLabel('Recipient email').fill(friend.email);
    await send().getByLabel('Amount').fill(amount);
    await tabTo(page, /^First run at/);
    await send().getByLabel(/^First run at/).fill(runAt);
    if (repeat) {
      await tabTo(page, /^Repeat$/);
      await send().getByLabel('Repeat').selectOption({ label: repeat.label });
      await tabTo(page, /^Runs in all/);
      await page.keyboard.type(repeat.count);
    }
    await tabTo(page, /^Schedule$/);
    await page.keyboard.press('Enter');
  }

  it('schedules a daily transfer from the Send form, and shows its next run and each run\'s outcome as they happen', async () => {
    await scheduleFromKeyboard('6.00', await localIn(4_000), { label: 'Every day', count: '3' });
    await send().getByRole('status').filter({ hasText: /^Scheduled 6\.00 USD: first run .*, 3 runs\.$/ }).waitFor();
    const [made] = await schedules();
    assert.deepEqual([made.transfer.recipient_email, made.transfer.amount, made.repeat], [friend.email, '6.00', { every: 'day', count: 3 }]);
    assert.ok(Math.abs(Date.parse(made.run_at) - Date.now()) < 30_000, `the first run at the instant the person chose in their own time: ${made.run_at}`);
    const row = scheduled().getByRole('row', { name: /every day, 3 runs/ });
    await row.getByRole('button', { name: `Cancel the scheduled transfer of 6.00 USD to ${friend.email}` }).waitFor();
    await expectAccessible('a schedule waiting for its first run');

    // 20.00 pays three runs of 6.00; a fourth is refused by the ledger.
    await row.getByText('Run 3').waitFor({ timeout: 20_000 });
    await row.getByText('completed', { exact: true }).waitFor();
    assert.equal(await row.getByText(/^Run \d/).count(), 3);
    assert.equal(await row.locator('strong', { hasText: 'created' }).count(), 3);

    await scheduleFromKeyboard('6.00', await localIn(2_000));
    const refusedRow = scheduled().getByRole('row', { name: /^6\.00 USD .* once/ }).first();
    await refusedRow.getByText(/Run 1, .*: refused \(insufficient_funds: /).waitFor({ timeout: 20_000 });
    const api = await schedules();
    assert.deepEqual(api[0].runs.map((r: { status: string; error: { error: string } | null }) => [r.status, r.error?.error]), [['refused', 'insufficient_funds']]);
    await expectAccessible('runs created and refused');
    await screenshot(page, 'scheduled-transfers');
  });

  it('cancels a schedule from its button, and refuses a first run in the past next to its field', async () => {
    const tomorrow = await localIn(86_400_000);
    await scheduleFromKeyboard('3.00', tomorrow, { label: 'Every month', count: '12' });
    const row = scheduled().getByRole('row', { name: /every month, 12 runs/ });
    await row.getByText('scheduled', { exact: true }).waitFor();
    await tabTo(page, /^Cancel the scheduled transfer of 3\.00 USD/);
    await page.keyboard.press('Enter');
    await row.getByText('cancelled', { exact: true }).waitFor();
    const cancelled = (await schedules()).find((s: { repeat: { every: string } | null }) => s.repeat?.every === 'month');
    assert.deepEqual([cancelled.status, cancelled.next_run_at, cancelled.runs], ['cancelled', null, []]);
    assert.equal(await row.getByRole('button').count(), 0, 'nothing left to cancel');

    const before = (await schedules()).length;
    await scheduleFromKeyboard('1.00', await localIn(-86_400_000));
    const error = send().locator('#field-run-at-error');
    await error.waitFor();
    assert.match(await error.textContent() ?? '', /run_at must be in the future/);
    assert.equal(await send().getByLabel(/^First run at/).getAttribute('aria-invalid'), 'true');
    assert.equal((await schedules()).length, before, 'nothing stored');
    await expectAccessible('a refused first run');
  });

  it('fits the scheduled transfers in their card at 375 px', async () => {
    await page.setViewportSize({ width: 375, height: 900 });
    await eventually(async () => ((await scheduled().getByRole('row').count()) > 1 ? true : undefined), 10_000, 'the schedules listed');
    await expectAccessible('the scheduled transfers at 375 px');
    await screenshot(page, 'scheduled-transfers-375');
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
