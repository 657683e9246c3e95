// The browser dashboard (/dashboard), walked as a person walks it, in Debian's Chromium driven by
// playwright-core: create a sandbox account and copy its secret key, add test funds, send a
// transfer and watch it complete in the Activity feed, refuse bad input next to its field, sign
// out and in again, from the keyboard, at 375 px and at 1280 px. axe-core checks every page (no
// serious or critical violation), and the page runs under a Content-Security-Policy that allows
// no inline script, with no violation reported. Screenshots go to DASHBOARD_SCREENSHOTS_DIR
// (the README's were taken so), else to a temporary folder.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { testService } from '../hooks';
import { signUp, TEST_PASSWORD } from '../support/accounts';
import { call, eventually } from '../support/http';
import { assertNoCspViolation, type DashboardWindow, expectPageAccessible, openDashboardWindow, overflowOf, screenshot, tabTo } from '../support/browser';

const BUILT = path.join(__dirname, '..', '..', 'dashboard');

describe('the dashboard in a browser', function () {
  this.timeout(120_000);
  const base = () => testService().baseUrl;
  let dashboard: DashboardWindow | undefined;
  let page: Page;
  const email = `dashboard-${Date.now()}@example.com`;

  before(async () => {
    dashboard = await openDashboardWindow();
    page = dashboard.page;
  });
  after(async () => dashboard?.browser.close());

  /** No serious or critical accessibility violation, and nothing wider than the window. */
  const expectAccessible = (what: string) => expectPageAccessible(page, what);
  const shot = (name: string) => screenshot(page, name);

  it('serves the page under a Content-Security-Policy without inline script, never cached, its assets cached for good', async () => {
    const response = await fetch(`${base()}/dashboard`);
    assert.equal(response.status, 200);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const html = await response.text();
    assert.doesNotMatch(html, /<script>(?!<)/, 'no inline script');
    const script = /src="(\/dashboard\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    assert.ok(script, html);
    const asset = await fetch(`${base()}${script}`);
    assert.deepEqual([asset.status, asset.headers.get('cache-control')], [200, 'public, max-age=31536000, immutable']);
    assert.equal((await fetch(`${base()}/dashboard/assets/nothing.js`)).status, 404);
    // The page names its icon, and the icon every browser asks for is there: no 404 on any page.
    assert.match(html, /<link rel="icon" type="image\/svg\+xml" href="\/favicon.ico">/);
    const icon = await fetch(`${base()}/favicon.ico`);
    assert.deepEqual([icon.status, icon.headers.get('content-type')], [200, 'image/svg+xml']);
    assert.match(await icon.text(), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  });

  it('keeps the JavaScript and CSS together under 150 KB gzipped', () => {
    const files = readdirSync(path.join(BUILT, 'assets'));
    const gzipped = files.reduce((sum, file) => sum + gzipSync(readFileSync(path.join(BUILT, 'assets', file))).length, 0);
    console.log(`      dashboard JS + CSS: ${(gzipped / 1024).toFixed(1)} KB gzipped (${files.join(', ')})`);
    assert.ok(gzipped <= 150 * 1024, `${gzipped} bytes gzipped`);
  });

  it('creates a sandbox account, shows its secret key once with a copy button, and signs in with the session in this tab only', async () => {
    await page.goto(`${base()}/dashboard`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible('the sign-in page');
    await shot('sign-in');
    const signUpForm = page.getByRole('region', { name: 'Create sandbox account' });
    await signUpForm.getByLabel('Email').fill(email);
    await signUpForm.getByLabel(/Password/).fill(TEST_PASSWORD);
    await signUpForm.getByLabel('Business name').fill('Dashboard Ltd');
    await signUpForm.getByLabel(/Country/).fill('XX');
    await signUpForm.getByRole('button', { name: 'Create sandbox account' }).click();
    const countryError = page.locator('#field-country_code-error');
    await countryError.waitFor();
    assert.match(await countryError.textContent() ?? '', /country_code/, 'the API\'s message next to the field');
    assert.equal(await signUpForm.getByLabel(/Country/).getAttribute('aria-invalid'), 'true');

    await signUpForm.getByLabel(/Country/).fill('GB');
    await signUpForm.getByRole('button', { name: 'Create sandbox account' }).click();
    const key = await page.getByTestId('secret').textContent();
    assert.match(key ?? '', /^sk_/);
    assert.ok(await page.getByRole('button', { name: 'Copy secret key' }).isVisible());
    await shot('secret-key');
    await page.getByRole('button', { name: 'Continue to the dashboard' }).click();
    await page.getByRole('heading', { name: 'Balances' }).waitFor();
    assert.doesNotMatch(page.url(), /sk_|eyJ/, 'no credential in the address');
    const stored = await page.evaluate('sessionStorage.getItem("dashboard.session")') as string | null;
    assert.ok(stored && JSON.parse(stored).token, 'the session is kept in this tab\'s sessionStorage');
    assert.equal(await page.evaluate('document.cookie'), '', 'and in no cookie');
  });

  it('adds test funds, refuses bad input next to the field, and shows the balance move', async () => {
    const started = Date.now();
    await page.reload();
    await page.getByRole('heading', { name: 'Balances' }).waitFor();
    const paint = await page.evaluate('performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null') as number | null;
    console.log(`      overview: first contentful paint ${paint === null ? 'n/a' : `${Math.round(paint)} ms`}, balances shown ${Date.now() - started} ms after the reload began`);

    const funds = page.getByRole('region', { name: 'Add test funds' });
    await funds.getByLabel('Amount').fill('12.345');
    await funds.getByRole('button', { name: 'Add test funds' }).click();
    await page.locator('#field-faucet-amount-error').waitFor();
    assert.match(await page.locator('#field-faucet-amount-error').textContent() ?? '', /decimal/);

    await funds.getByLabel('Currency').selectOption('USD');
    await funds.getByLabel('Amount').fill('100.00');
    await funds.getByRole('button', { name: 'Add test funds' }).click();
    const balances = page.getByRole('region', { name: 'Balances by currency' });
    await balances.getByRole('row', { name: /USD\s+100\.00\s+0\.00/ }).waitFor();
    await page.getByRole('log', { name: 'Activity' }).getByText('balance.updated').first().waitFor();
    await expectAccessible('the overview');
    await shot('overview');
  });

  it('sends a transfer from the keyboard and watches it complete, in the form and in the Activity feed', async () => {
    const friend = await signUp(base());
    // From the keyboard: the Transfers link, then the form's fields in order.
    await page.getByRole('link', { name: 'Transfers' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Send' }).waitFor();
    await page.getByLabel('Recipient email').focus();
    await page.keyboard.type(friend.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('10.00');
    // Past the currency and the schedule's fields, left empty: the transfer goes now.
    await tabTo(page, /^Send$/);
    await page.keyboard.press('Enter');
    await page.getByTestId('sent-status').filter({ hasText: 'completed' }).waitFor().catch(async (error: Error) => {
      // Say what the page shows instead: an error in the form, or the status it stopped at.
      throw new Error(`${error.message}\nthe Send area shows: ${await page.getByRole('region', { name: 'Send' }).innerText().catch(() => '(nothing)')}`);
    });
    await page.getByRole('region', { name: 'Transfers list' }).getByRole('cell', { name: friend.email }).waitFor();
    const received = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: friend.token });
    assert.equal(received.body.breakdown.find((b: { currency: string }) => b.currency === 'USD').available, '10.00');

    await page.getByLabel('Recipient email').fill('nobody-here@example.com');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#field-email-error').waitFor();
    assert.match(await page.locator('#field-email-error').textContent() ?? '', /no account is registered/);
    await expectAccessible('the transfers page');
    await shot('transfers');

    // The list's filters (GET /v1/transfers): the recipient in another case and today's UTC day keep
    // the transfer; another currency keeps none; cleared, the list is whole again.
    const filters = page.getByRole('group', { name: 'Filter the transfers' });
    const rows = page.getByRole('region', { name: 'Transfers list' });
    await filters.getByLabel('Sent to (email)').fill(friend.email.toUpperCase());
    await filters.getByLabel('From (UTC day)').fill(new Date().toISOString().slice(0, 10));
    await rows.getByRole('cell', { name: friend.email }).waitFor();
    await filters.getByLabel('Currency').focus();
    await filters.getByLabel('Currency').selectOption('EUR');
    await page.getByText('No transfers match these filters.').waitFor();
    await filters.getByLabel('Currency').selectOption('');
    await filters.getByLabel('Sent to (email)').fill('');
    await filters.getByLabel('From (UTC day)').fill('');
    await rows.getByRole('cell', { name: friend.email }).waitFor();

    // Reversed from its details: 4.00 back, then a refusal naming the amount for more than is left.
    await rows.getByRole('button', { name: /^Details of the transfer of 10.00 USD/ }).first().click();
    const details = page.getByRole('region', { name: 'Transfer details' });
    await details.getByLabel('Amount to give back (empty: all that is left)').fill('4.00');
    await details.getByLabel('Reason').fill('sent too much');
    await details.getByRole('button', { name: 'Reverse' }).click();
    await details.getByRole('status').filter({ hasText: 'Reversed: 4.00 USD given back to you.' }).waitFor();
    await details.getByText(/4\.00 USD given back .*: sent too much/).waitFor();
    const back = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: friend.token });
    assert.equal(back.body.breakdown.find((b: { currency: string }) => b.currency === 'USD').available, '6.00');
    await details.getByLabel('Amount to give back (empty: all that is left)').fill('7.00');
    await details.getByRole('button', { name: 'Reverse' }).click();
    await details.locator('#field-reverse-amount-error').waitFor();
    assert.match(await details.locator('#field-reverse-amount-error').textContent() ?? '', /at most 6\.00 USD/);
    await expectAccessible('a transfer\'s details with its reversals');

    // Its metadata, from the keyboard: a key added, its value changed, a key past 40 characters
    // refused next to the key in the API's words, a key removed by its row's button.
    const transferId = (await details.locator('dd code').first().textContent())!;
    const metadata = details.getByRole('region', { name: 'Metadata of the transfer' });
    const saveKey = async (key: string, value: string) => {
      await details.getByLabel('Key (1 to 40 characters)').focus();
      await page.keyboard.type(key);
      await page.keyboard.press('Tab');
      await page.keyboard.type(value);
      await page.keyboard.press('Enter');
    };
    await saveKey('order_id', 'A-17');
    await details.getByRole('status').filter({ hasText: 'Saved order_id.' }).waitFor();
    await metadata.getByRole('row', { name: /order_id\s+A-17/ }).waitFor();
    await saveKey('channel', 'web');
    await metadata.getByRole('row', { name: /channel\s+web/ }).waitFor();
    await saveKey('order_id', 'A-18');
    await metadata.getByRole('row', { name: /order_id\s+A-18/ }).waitFor();
    await saveKey('k'.repeat(41), 'too long a key');
    await details.locator('#field-transfer-metadata-key-error').waitFor();
    assert.match(await details.locator('#field-transfer-metadata-key-error').textContent() ?? '', /the key "k{41}" of metadata must NOT have more than 40 characters/);
    await details.getByLabel('Key (1 to 40 characters)').fill('');
    await details.getByLabel('Value (up to 500 characters)').fill('');
    await metadata.getByRole('button', { name: 'Remove the key channel' }).focus();
    await page.keyboard.press('Enter');
    await details.getByRole('status').filter({ hasText: 'Removed channel.' }).waitFor();
    await metadata.getByRole('row', { name: /channel/ }).waitFor({ state: 'detached' });
    const session = JSON.parse(await page.evaluate('sessionStorage.getItem("dashboard.session")') as string) as { token: string };
    assert.deepEqual((await call(base(), 'GET', `/v1/transfers/${transferId}`, undefined, { token: session.token })).body.metadata, { order_id: 'A-18' });
    await expectAccessible('a transfer\'s details with its metadata');
    // A bank transfer is returned by its partner: the form says the partner is asked, and the list follows the return until it is given back.
    const viban = friend.vibans.find((v) => v.currency === 'USD') as Record<string, string>;
    const bank = await call(base(), 'POST', '/v1/transfers', { recipient: { email: friend.email, name: 'Friend', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: 'USD' } }, amount: '3.00', currency: 'USD' },
      { token: session.token, idempotencyKey: randomUUID() });
    assert.equal(bank.status, 201, JSON.stringify(bank.body));
    await eventually(async () => (await call(base(), 'GET', `/v1/transfers/${bank.body.transfer_id}`, undefined, { token: session.token })).body.status === 'completed' || undefined, 30_000, 'the bank transfer completes');
    await rows.getByRole('button', { name: /^Details of the transfer of 3\.00 USD/ }).first().click();
    await details.getByLabel('Amount to give back (empty: all that is left)').fill('2.00');
    await details.getByRole('button', { name: 'Reverse' }).click();
    await details.getByRole('status').filter({ hasText: 'Asked the partner to return 2.00 USD: pending until it answers.' }).waitFor().catch(async (error: Error) => {
      throw new Error(`${error.message}\nthe details show: ${await details.innerText().catch(() => '(nothing)')}`);
    });
    await details.getByText(/2\.00 USD given back/).waitFor();

    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('log', { name: 'Activity' }).getByText('transfer.completed').first().waitFor();
  });

  it('is usable at 375 px: nothing wider than the screen, every area reachable', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    const areas = [['Overview', 'Overview'], ['Transfers', 'Transfers'], ['Wallets', 'Wallets'], ['Holds', 'Holds'], ['FX', 'FX'], ['Customers', 'Customers'], ['Payments', 'Payments'], ['Developers', 'API keys'], ['Finance', 'Finance']];
    for (const [link, area] of areas) {
      await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { level: 1, name: area, exact: true }).waitFor();
      const { overflow, sticking } = await overflowOf(page);
      assert.ok(overflow <= 0, `${area} is ${overflow} px wider than the screen (${sticking})`);
      await expectAccessible(`${area} at 375 px`);
      if (area === 'Transfers') await shot('transfers-375');
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('signs out, forgetting the session (which the server refuses from then on), and signs in again with email and password', async () => {
    const token = JSON.parse(await page.evaluate('sessionStorage.getItem("dashboard.session")') as string).token as string;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    assert.equal(await page.evaluate('sessionStorage.getItem("dashboard.session")') as string | null, null);
    await eventually(async () => ((await call(base(), 'GET', '/v1/accounts/me/vibans', undefined, { token })).status === 401 ? true : undefined), 5_000, 'the signed-out token to be refused');
    const signIn = page.getByRole('region', { name: 'Sign in' });
    await signIn.getByLabel('Email').fill(email);
    await signIn.getByLabel('Password').fill('not the password');
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await signIn.getByLabel('Password').fill(TEST_PASSWORD);
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Balances' }).waitFor();
    assertNoCspViolation(dashboard);
  });
});
