// The dashboard's Wallets and Holds areas, walked in Chromium against the real service: a wallet
// created and renamed, money moved into it (the first answer lost on its way back, the retry sent
// under the same Idempotency-Key and done once), a refused close in the API's words, a hold
// created, part of it captured for a friend and the rest voided from the keyboard alone, with the
// API's state checked after each step; axe-core on each, and every table fitting its card at
// 1280 and 375 px; at the end the wallet emptied and closed.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { closeDashboardWindow, type DashboardWindow, expectPageAccessible, focusedName, openSignedInDashboard, screenshot, tabTo } from '../support/browser';
import { call, eventually } from '../support/http';
import { fund } from '../support/money';

interface Balance { currency: string; available: string; held: string; pending: string }

describe('the dashboard\'s wallets and holds in a browser', function () {
  this.timeout(180_000);
  const base = () => testService().baseUrl;
  let dashboard: DashboardWindow | undefined;
  let page: Page;
  let owner: SignedUp;
  let friend: SignedUp;
  let walletId = '';
  let holdId = '';

  before(async () => {
    owner = await signUp(base());
    friend = await signUp(base());
    await fund(base(), owner.key, 'USD', '500.00');
    dashboard = await openSignedInDashboard(base(), owner.email);
    page = dashboard.page;
  });
  after(() => closeDashboardWindow(dashboard));

  const get = async (path: string, who: SignedUp = owner) => {
    const answer = await call(base(), 'GET', path, undefined, { token: who.key });
    assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  /** The USD figures of "main" or a wallet, as the API has them (zeros where it has none yet). */
  const usd = async (side: string, who: SignedUp = owner): Promise<Pick<Balance, 'available' | 'held'>> => {
    const found = ((await get(`/v1/wallets/${side}/balances`, who)).balances as Balance[]).find((b) => b.currency === 'USD');
    return { available: found?.available ?? '0.00', held: found?.held ?? '0.00' };
  };
  const expectAccessible = (what: string) => expectPageAccessible(page, what, { tablesFitCards: true });
  const area = async (link: string) => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: link, exact: true }).waitFor();
  };
  /** The focus lands on `name` (it moves once the page has drawn what it goes to). */
  const focused = (name: string | RegExp, what: string) => eventually(async () => {
    const now = await focusedName(page);
    return (typeof name === 'string' ? now === name : name.test(now)) ? now : undefined;
  }, 5_000, `${what} (focus on ${name})`);
  const region = (name: string) => page.getByRole('region', { name, exact: true });
  const detail = () => page.getByRole('region', { name: /^Hold of / });

  it('creates a wallet, moves money into it (a retry after a lost answer under the same Idempotency-Key, done once), renames it, and shows a refused close in the API\'s words', async () => {
    await area('Wallets');
    await region('New wallet').getByLabel('Wallet name').fill('Savings');
    await region('New wallet').getByRole('button', { name: 'Create wallet' }).click();
    await region('New wallet').getByRole('status').filter({ hasText: 'Wallet Savings created.' }).waitFor();
    const listed = (await get('/v1/wallets')).data;
    assert.deepEqual(listed.map((w: { name: string; status: string }) => [w.name, w.status]), [['Savings', 'open']]);
    walletId = listed[0].id;
    await region('Wallets list').getByRole('row', { name: /Savings\s+open/ }).waitFor();

    // The first answer is lost on its way back (a 503, as a proxy would answer); the person presses Move again.
    const keys: string[] = [];
    await page.route('**/v1/wallet-transfers', (route) => {
      keys.push(route.request().headers()['idempotency-key']);
      return keys.length === 1
        ? route.fulfill({ status: 503, json: { success: false, error: 'service_unavailable', message: 'the service did not answer in time; repeat the request', details: null } })
        : route.continue();
    });
    const move = region('Move money');
    try {
      assert.equal(await move.getByLabel('To', { exact: true }).inputValue(), walletId, 'money goes to the wallet unless told otherwise');
      await move.getByLabel('Amount to move').fill('30.00');
      await move.getByRole('button', { name: 'Move' }).click();
      await move.getByRole('alert').filter({ hasText: 'the service did not answer in time' }).waitFor();
      assert.deepEqual(await usd(walletId), { available: '0.00', held: '0.00' }, 'the lost request never reached the service');
      await move.getByRole('button', { name: 'Move' }).click();
      await move.getByRole('status').filter({ hasText: 'Moved 30.00 USD from Main balance to Savings.' }).waitFor();
    } finally {
      await page.unroute('**/v1/wallet-transfers');
    }
    assert.equal(keys.length, 2);
    assert.equal(keys[1], keys[0], 'the retry repeats the request under its key');
    await focused('Moved 30.00 USD from Main balance to Savings.', 'the reader is told what happened');
    assert.deepEqual(await usd(walletId), { available: '30.00', held: '0.00' });
    assert.deepEqual(await usd('main'), { available: '470.00', held: '0.00' });
    const balances = region('Balances by wallet and currency');
    await balances.getByRole('row', { name: /Savings\s+USD\s+30\.00\s+0\.00\s+0\.00/ }).waitFor();
    await balances.getByRole('row', { name: /Main balance\s+USD\s+470\.00\s+0\.00\s+0\.00/ }).waitFor();

    // A second move of the same amount is a new request: a new key, and the money moves again.
    await move.getByLabel('Amount to move').fill('5.00');
    await move.getByRole('button', { name: 'Move' }).click();
    await move.getByRole('status').filter({ hasText: 'Moved 5.00 USD' }).waitFor();
    await move.getByLabel('From', { exact: true }).selectOption(walletId);
    await move.getByLabel('To', { exact: true }).selectOption('main');
    await move.getByLabel('Amount to move').fill('5.00');
    await move.getByRole('button', { name: 'Move' }).click();
    await move.getByRole('status').filter({ hasText: 'Moved 5.00 USD from Savings to Main balance.' }).waitFor();
    assert.deepEqual(await usd(walletId), { available: '30.00', held: '0.00' });
    await expectAccessible('the Wallets area');

    await region('Wallets list').getByRole('button', { name: 'Rename Savings' }).click();
    await focused('New name', 'renaming takes the reader to the name');
    await page.getByLabel('New name').fill('Bike fund');
    await page.getByRole('button', { name: 'Save name' }).click();
    await region('Wallets').getByRole('status').filter({ hasText: 'Wallet renamed to Bike fund.' }).waitFor();
    assert.equal((await get(`/v1/wallets/${walletId}`)).name, 'Bike fund');
    await focused('Rename Bike fund', 'back where the reader left the list');

    await region('Wallets list').getByRole('button', { name: 'Close Bike fund' }).click();
    const refused = await call(base(), 'POST', `/v1/wallets/${walletId}/close`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(refused.body.error, 'wallet_not_empty');
    await region('Wallets').getByRole('alert').filter({ hasText: refused.body.message }).waitFor();
    assert.equal((await get(`/v1/wallets/${walletId}`)).status, 'open', 'nothing changed');
  });

  it('holds 40.00, then captures 15.00 of it for a friend, raises it by 10.00 and voids the rest from the keyboard, the API agreeing after each step', async () => {
    await area('Holds');
    const form = region('New hold');
    await form.getByLabel('Amount to hold').fill('40.00');
    await form.getByLabel('Description (optional)').fill('deposit');
    await form.getByRole('button', { name: 'Create hold' }).click();
    await focused('Hold of 40.00 USD: deposit', 'a new hold is opened, its heading focused');
    const holds = (await get('/v1/holds')).data;
    assert.deepEqual(holds.map((h: { amount: string; status: string; captured_amount: string }) => [h.amount, h.status, h.captured_amount]), [['40.00', 'active', '0.00']]);
    holdId = holds[0].id;
    assert.deepEqual(await usd('main'), { available: '430.00', held: '40.00' });
    await region('Holds list').getByRole('row', { name: /deposit\s+Main balance\s+40\.00 USD\s+0\.00\s+active/ }).waitFor();
    // Expiry in 7 days by default: the time left counts down from there.
    assert.match(await region('Holds list').getByTestId('time-left').textContent() ?? '', /^(6 d 23 h|7 d)$/);
    await expectAccessible('a new hold');

    await tabTo(page, /^Amount to capture$/);
    await page.keyboard.type('15.00');
    await page.keyboard.press('Tab');
    assert.equal(await focusedName(page), 'Pay to (recipient email)');
    await page.keyboard.type(friend.email);
    await tabTo(page, /^Capture$/);
    await page.keyboard.press('Enter');
    await focused(`Captured 15.00 USD for ${friend.email}.`, 'the reader is told what happened');
    let hold = await get(`/v1/holds/${holdId}`);
    assert.deepEqual([hold.status, hold.captured_amount, hold.captures.length], ['active', '15.00', 1]);
    assert.deepEqual(await usd('main'), { available: '430.00', held: '25.00' });
    assert.equal((await usd('main', friend)).available, '15.00', 'the friend was paid');
    await detail().getByRole('region', { name: 'Captures' }).getByRole('row', { name: new RegExp(`15\\.00\\s+${friend.email.replace(/[.+]/g, '\\$&')}\\s+no`) }).waitFor();

    // Raised by 10.00 (an increment), from the keyboard: held from the main balance at once.
    await tabTo(page, /^Amount to add to the hold$/);
    await page.keyboard.type('10.00');
    await tabTo(page, /^Raise the hold$/);
    await page.keyboard.press('Enter');
    await focused('Raised by 10.00 USD: the hold holds 50.00 USD now.', 'the reader is told what happened');
    hold = await get(`/v1/holds/${holdId}`);
    assert.deepEqual([hold.status, hold.amount, hold.captured_amount], ['active', '50.00', '15.00']);
    assert.deepEqual(await usd('main'), { available: '420.00', held: '35.00' });
    await detail().getByRole('heading', { name: 'Hold of 50.00 USD: deposit' }).waitFor();
    await expectAccessible('a raised hold');

    // More than is left: refused in the API's words, and nothing changes.
    await tabTo(page, /^Amount to capture$/);
    await page.keyboard.type('40.00');
    await tabTo(page, /^Capture$/);
    await page.keyboard.press('Enter');
    const over = await call(base(), 'POST', `/v1/holds/${holdId}/capture`, { amount: '40.00', recipient_email: friend.email, final: false }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(over.status, 422, JSON.stringify(over.body));
    assert.equal(over.body.error, 'hold_exceeded');
    await detail().getByText(over.body.message).waitFor();
    hold = await get(`/v1/holds/${holdId}`);
    assert.deepEqual([hold.status, hold.amount, hold.captured_amount], ['active', '50.00', '15.00'], 'nothing changed');

    await tabTo(page, /^Void the rest of this hold$/);
    await page.keyboard.press('Enter');
    await focused('Voided: 35.00 USD given back to available.', 'the reader is told what happened');
    hold = await get(`/v1/holds/${holdId}`);
    assert.deepEqual([hold.status, hold.captured_amount, hold.released_amount], ['voided', '15.00', '35.00']);
    assert.deepEqual(await usd('main'), { available: '455.00', held: '0.00' });
    await detail().getByTestId('hold-status').filter({ hasText: 'voided' }).waitFor();
    assert.equal(await detail().getByRole('button', { name: 'Capture' }).count(), 0, 'a voided hold offers no capture');
    await region('Holds list').getByRole('row', { name: /deposit\s+Main balance\s+50\.00 USD\s+15\.00\s+voided/ }).waitFor();
    await expectAccessible('a voided hold');
  });

  for (const width of [1280, 375]) {
    it(`fits every table of the Wallets and Holds areas in its card at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 });
      await area('Wallets');
      await region('Wallets list').getByRole('row', { name: /Bike fund/ }).waitFor();
      await region('Balances by wallet and currency').getByRole('row', { name: /Bike fund/ }).waitFor();
      await expectAccessible(`the Wallets area at ${width} px`);
      if (width === 1280) {
        // Two more areas in the top bar still leave it one line on a laptop's screen.
        const top = async (name: string) => (await page.getByRole('banner').getByText(name, { exact: true }).boundingBox())!.y;
        assert.ok(Math.abs(await top('Sign out') - await top('Payments sandbox')) < 12, 'Sign out stays on the top bar\'s one line');
      }
      if (width === 1280) await screenshot(page, 'wallets');
      await area('Holds');
      await region('Holds list').getByRole('button', { name: /^Details of the hold of 50\.00 USD \(deposit\)/ }).click();
      await detail().getByRole('region', { name: 'Captures' }).waitFor();
      await expectAccessible(`the Holds area at ${width} px`);
      if (width === 375) await screenshot(page, 'holds-375');
    });
  }

  it('empties the wallet and closes it', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await area('Wallets');
    const move = region('Move money');
    await move.getByLabel('From', { exact: true }).selectOption(walletId);
    await move.getByLabel('To', { exact: true }).selectOption('main');
    await move.getByLabel('Amount to move').fill('30.00');
    await move.getByRole('button', { name: 'Move' }).click();
    await move.getByRole('status').filter({ hasText: 'Moved 30.00 USD from Bike fund to Main balance.' }).waitFor();
    await region('Wallets list').getByRole('button', { name: 'Close Bike fund' }).click();
    await region('Wallets').getByRole('status').filter({ hasText: 'Wallet Bike fund closed.' }).waitFor();
    const wallet = await get(`/v1/wallets/${walletId}`);
    assert.equal(wallet.status, 'closed');
    assert.deepEqual(await usd('main'), { available: '485.00', held: '0.00' });
    await region('Wallets list').getByRole('row', { name: /Bike fund\s+closed/ }).waitFor();
  });
});
