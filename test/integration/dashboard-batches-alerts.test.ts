// The dashboard's transfer batches, balances at an instant and balance alerts, walked in Chromium
// against the real service from the keyboard: a CSV file refused in the page (a missing column, a
// bad amount) with nothing sent, a batch made each alone (its first answer lost, the retry under
// the same Idempotency-Key, made once) and two all or none, each item's outcome as the API has it;
// the overview's and the wallets' balances as they were at an instant, and an instant in the
// future refused in the API's words; an alert created, its crossing told in words in the
// activity, and the alert deleted. axe-core on each, every table fitting its card at 1280 and 375 px.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { testService } from '../hooks';
import { signUp, TEST_PASSWORD, type SignedUp } from '../support/accounts';
import { accessibilityViolations, focusedName, launchChromium, overflowOf, screenshot, signInToDashboard, tablesOverflowingCards, tabTo } from '../support/browser';
import { call, eventually } from '../support/http';
import { fund, transfer, transferReaches } from '../support/money';

const CHOOSER_PRESSES_MAX = 3;

interface ItemOutcome { index: number; status: string; transfer_id: string | null; error: { error: string; message: string } | null }

describe('the dashboard\'s transfer batches, balances at an instant and balance alerts in a browser', function () {
  this.timeout(180_000);
  const base = () => testService().baseUrl;
  let browser: Browser;
  let page: Page;
  let owner: SignedUp;
  let friend: SignedUp;
  const cspViolations: string[] = [];
  /** The batches the page sent, with their Idempotency-Keys, in order. */
  const batchRequests: Array<{ key: string; body: { atomic: boolean; transfers: unknown[] } }> = [];

  before(async () => {
    owner = await signUp(base());
    friend = await signUp(base());
    await fund(base(), owner.key, 'USD', '500.00');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (message) => { if (/Content Security Policy|Content-Security-Policy/i.test(message.text())) cspViolations.push(message.text()); });
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/v1/transfer-batches')) batchRequests.push({ key: request.headers()['idempotency-key'], body: request.postDataJSON() });
    });
    await signInToDashboard(page, base(), owner.email, TEST_PASSWORD);
  });
  after(async () => {
    await browser?.close();
    assert.deepEqual(cspViolations, [], 'the page broke no rule of its Content-Security-Policy');
  });

  const get = async (path: string) => {
    const answer = await call(base(), 'GET', path, undefined, { token: owner.key });
    assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const usdAvailable = async (side = 'main', at?: string): Promise<string> => {
    const balances: Array<{ currency: string; available: string }> = (await get(`/v1/wallets/${side}/balances${at ? `?at=${encodeURIComponent(at)}` : ''}`)).balances;
    return balances.find((b) => b.currency === 'USD')?.available ?? '0.00';
  };
  const expectAccessible = async (what: string) => {
    assert.deepEqual(await accessibilityViolations(page), [], `${what}: no serious or critical accessibility violation`);
    const { overflow, sticking } = await overflowOf(page);
    assert.ok(overflow <= 0, `${what} is ${overflow} px wider than the window (${sticking})`);
    // The Transfers list is a table that scrolls sideways inside its card by design (ScrollTable); the tables of this issue fit.
    assert.deepEqual((await tablesOverflowingCards(page)).filter((table) => !table.startsWith('Transfers list ')), [], `${what}: every table fits its card`);
  };
  const area = async (link: string) => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: link, exact: true }).waitFor();
  };
  /** Back to the top of the area's content, where the app puts the focus on arriving. */
  const fromTop = () => page.evaluate('document.getElementById("main").focus()');
  const focused = (name: string, what: string) => eventually(async () => ((await focusedName(page)) === name ? name : undefined), 5_000, `${what} (focus on ${name})`);
  const region = (name: string) => page.getByRole('region', { name, exact: true });
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  /**
   * Chooses `csv` as the batch's file from the keyboard: Space on the file field opens the chooser.
   * Headless Chromium once let a press open none (one run of the first three), so the press is
   * repeated, a bounded number of times.
   */
  const chooseCsv = async (csv: string) => {
    await fromTop();
    await tabTo(page, /^CSV file of transfers$/);
    for (let attempt = 1; ; attempt += 1) {
      const [chooser] = await Promise.all([page.waitForEvent('filechooser', { timeout: 3_000 }).catch(() => null), page.keyboard.press('Space')]);
      if (chooser) { await chooser.setFiles({ name: 'transfers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) }); return; }
      if (attempt >= CHOOSER_PRESSES_MAX) throw new Error(`no file chooser after ${CHOOSER_PRESSES_MAX} presses of Space on the file field`);
    }
  };
  const setAtomic = async (atomic: boolean) => {
    await tabTo(page, /^All or none/);
    if (await page.getByRole('checkbox', { name: /^All or none/ }).isChecked() !== atomic) await page.keyboard.press('Space');
  };
  const sendBatch = async () => {
    await tabTo(page, /^Upload batch$/);
    await page.keyboard.press('Enter');
  };
  const batchAnswer = () => page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/v1/transfer-batches') && r.status() === 201);

  it('refuses a CSV file without a column or with a bad amount in the page, naming the line, and sends nothing', async () => {
    await area('Transfers');
    const batch = region('Batch of transfers');
    await chooseCsv(`recipient_email,currency,note\n${friend.email},USD,rent\n`);
    await sendBatch();
    await batch.getByRole('alert').filter({ hasText: 'The file is refused, nothing was sent: line 1: the header has no column amount' }).waitFor();

    await chooseCsv(`recipient_email,amount,currency,note\n${friend.email},1.00,USD,first\n${friend.email},ten,USD,second\n`);
    await sendBatch();
    await batch.getByRole('alert').filter({ hasText: 'line 3: amount "ten" is not a decimal amount' }).waitFor();
    assert.equal(batchRequests.length, 0, 'nothing was sent');
    assert.equal(await usdAvailable(), '500.00');
    await expectAccessible('a refused CSV file');
  });

  it('sends a batch each alone (its first answer lost, the retry under the same key, made once) and shows each item\'s outcome in the file\'s order', async () => {
    const csv = `recipient_email,amount,currency,note\n${friend.email},12.50,USD,"lunch, with ""friends"""\nnobody-${randomUUID()}@example.com,3.00,USD,\n${friend.email},7.50,USD,books\n`;
    let lost = false;
    await page.route('**/v1/transfer-batches', (route) => {
      if (lost) return route.continue();
      lost = true;
      return route.fulfill({ status: 503, json: { success: false, error: 'service_unavailable', message: 'the service did not answer in time; repeat the request', details: null } });
    });
    const batch = region('Batch of transfers');
    try {
      await chooseCsv(csv);
      await setAtomic(false);
      await sendBatch();
      await batch.getByRole('alert').filter({ hasText: 'the service did not answer in time' }).waitFor();
      assert.equal(await usdAvailable(), '500.00', 'the lost request never reached the service');
      const answered = batchAnswer();
      await sendBatch();
      const made = await (await answered).json();
      await focused('Batch (each alone): partial, some transfers created.', 'the reader is told what happened');
      assert.equal(batchRequests.length, 2);
      assert.equal(batchRequests[1].key, batchRequests[0].key, 'the retry repeats the upload under its key');
      assert.deepEqual(batchRequests[1].body.transfers[0], { recipient_email: friend.email, amount: '12.50', currency: 'USD', note: 'lunch, with "friends"' });

      const stored = await get(`/v1/transfer-batches/${made.id}`);
      assert.deepEqual([stored.atomic, stored.status, stored.items.map((i: ItemOutcome) => i.status)], [false, 'partial', ['created', 'refused', 'created']]);
      const items = region('Batch items');
      for (const [index, item] of (stored.items as ItemOutcome[]).entries()) {
        const outcome = item.transfer_id ?? `${item.error!.error}: ${item.error!.message}`;
        await items.getByRole('row', { name: new RegExp(`^${index + 2}\\s.*\\s${item.status}\\s+${escaped(outcome)}$`) }).waitFor();
      }
      for (const item of stored.items as ItemOutcome[]) if (item.transfer_id) await transferReaches(base(), owner.key, item.transfer_id, 'completed');
      assert.equal(await usdAvailable(), '480.00', 'each created transfer moved its money once');
      await expectAccessible('a batch made each alone');
      await screenshot(page, 'transfer-batch');
    } finally {
      await page.unroute('**/v1/transfer-batches');
    }
  });

  it('sends a batch all or none: one refused item leaves every transfer not created, and a good one creates them all', async () => {
    const batch = region('Batch of transfers');
    await chooseCsv(`recipient_email,amount,currency,note\n${friend.email},1.00,USD,kept back\nnobody-${randomUUID()}@example.com,1.00,USD,\n`);
    await setAtomic(true);
    let answered = batchAnswer();
    await sendBatch();
    const failed = await (await answered).json();
    await batch.getByTestId('batch-status').filter({ hasText: 'failed' }).waitFor();
    const stored = await get(`/v1/transfer-batches/${failed.id}`);
    assert.deepEqual([stored.atomic, stored.status, stored.items.map((i: ItemOutcome) => i.status)], [true, 'failed', ['not_created', 'refused']]);
    await region('Batch items').getByRole('row', { name: /^2\s.*not_created\s+another transfer was refused$/ }).waitFor();
    await region('Batch items').getByRole('row', { name: new RegExp(`^3\\s.*refused\\s+${escaped(stored.items[1].error.error)}`) }).waitFor();
    assert.equal(await usdAvailable(), '480.00', 'nothing moved');

    await chooseCsv(`recipient_email,amount,currency\r\n${friend.email},2.00,USD\r\n${friend.email},3.00,USD\r\n`);
    answered = batchAnswer();
    await sendBatch();
    const completed = await (await answered).json();
    await batch.getByTestId('batch-status').filter({ hasText: 'completed' }).waitFor();
    assert.deepEqual((await get(`/v1/transfer-batches/${completed.id}`)).items.map((i: ItemOutcome) => i.status), ['created', 'created']);
    assert.notEqual(batchRequests.at(-1)!.key, batchRequests.at(-2)!.key, 'another upload is another request');
    for (const item of completed.items as ItemOutcome[]) await transferReaches(base(), owner.key, item.transfer_id!, 'completed');
    assert.equal(await usdAvailable(), '475.00');
  });

  /** An instant as the "Balance at" field takes it: the browser's local date and time, to the second. */
  // In the form the field keeps its value: seconds left out when they are zero (as the browser
  // normalizes it; a value it would rewrite is refused by fill as malformed).
  const localInstant = (iso: string) => page.evaluate(`(() => {
    const d = new Date(${JSON.stringify(iso)});
    const two = (n) => String(n).padStart(2, '0');
    const minute = d.getFullYear() + '-' + two(d.getMonth() + 1) + '-' + two(d.getDate()) + 'T' + two(d.getHours()) + ':' + two(d.getMinutes());
    return d.getSeconds() === 0 ? minute : minute + ':' + two(d.getSeconds());
  })()`) as Promise<string>;
  /** Types `iso` into "Balance at" and shows the balances then, from the keyboard. */
  const balancesAt = async (iso: string) => {
    await fromTop();
    await tabTo(page, /^Balance at$/);
    await page.locator(':focus').fill(await localInstant(iso));
    await tabTo(page, /^Show balances then$/);
    await page.keyboard.press('Enter');
  };
  let earlier = '';

  it('shows the overview\'s and the wallets\' balances as they were at an instant, and the API\'s words for an instant in the future', async () => {
    // An instant between the batches above and a transfer below, on whole seconds (as the field takes it).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    earlier = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const sent = await transfer(base(), owner.key, { recipient_email: friend.email, amount: '25.00', currency: 'USD' });
    await transferReaches(base(), owner.key, sent.body.transfer_id, 'completed');
    assert.deepEqual([await usdAvailable('main', earlier), await usdAvailable()], ['475.00', '450.00']);

    await area('Overview');
    const balances = region('Balances');
    await balances.getByRole('row', { name: /^USD\s+450\.00/ }).waitFor();
    await balancesAt(earlier);
    await balances.getByRole('row', { name: /^USD\s+475\.00/ }).waitFor();
    await balances.getByRole('status').filter({ hasText: 'As they were at' }).waitFor();
    await expectAccessible('the overview\'s balances at an instant');

    const future = new Date(Date.now() + 86_400_000).toISOString();
    const refused = await call(base(), 'GET', `/v1/accounts/me/balance?at=${encodeURIComponent(future)}`, undefined, { token: owner.token });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.details, 'at');
    await balancesAt(future);
    await balances.getByText(refused.body.message).waitFor();
    assert.equal(await balances.getByLabel('Balance at').getAttribute('aria-invalid'), 'true');
    assert.equal(await balances.getByRole('row').count(), 0, 'no balances shown for a refused instant');
    await expectAccessible('an instant in the future');
    await tabTo(page, /^Back to now$/);
    await page.keyboard.press('Enter');
    await balances.getByRole('row', { name: /^USD\s+450\.00/ }).waitFor();

    await area('Wallets');
    const wallets = region('Balances by wallet and currency');
    await wallets.getByRole('row', { name: /^Main balance\s+USD\s+450\.00/ }).waitFor();
    await balancesAt(earlier);
    await wallets.getByRole('row', { name: /^Main balance\s+USD\s+475\.00/ }).waitFor();
    await balancesAt(future);
    await region('Wallet balances').getByText(refused.body.message).waitFor();
    await expectAccessible('the wallets\' balances for an instant in the future');
  });

  it('creates an alert, tells its crossing in words in the activity, and deletes it, from the keyboard', async () => {
    await area('Alerts');
    const form = region('New alert');
    // A threshold that is not an amount: refused by the API, at the field.
    await fromTop();
    await tabTo(page, /^Threshold amount$/);
    await page.keyboard.type('lots');
    await tabTo(page, /^Create alert$/);
    await page.keyboard.press('Enter');
    const bad = await call(base(), 'POST', '/v1/balance-alerts', { currency: 'USD', wallet_id: 'main', below: 'lots' }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    await form.getByText(bad.body.message).waitFor();
    assert.deepEqual((await get('/v1/balance-alerts')).data, [], 'no alert made');

    await fromTop();
    await tabTo(page, /^Threshold amount$/);
    await page.keyboard.press('Control+a');
    await page.keyboard.type('440.00');
    await tabTo(page, /^Create alert$/);
    await page.keyboard.press('Enter');
    await form.getByRole('status').filter({ hasText: 'Alert created: below 440.00 USD on Main balance.' }).waitFor();
    const alerts = (await get('/v1/balance-alerts')).data;
    assert.deepEqual(alerts.map((a: { currency: string; wallet_id: string; below: string | null; above: string | null }) => [a.currency, a.wallet_id, a.below, a.above]), [['USD', 'main', '440.00', null]]);
    await region('Alerts list').getByRole('row', { name: /^below 440\.00 USD\s+Main balance/ }).waitFor();
    await expectAccessible('the Alerts area');

    // 450.00 → 435.00 crosses it: the activity says so in words.
    const sent = await transfer(base(), owner.key, { recipient_email: friend.email, amount: '15.00', currency: 'USD' });
    await transferReaches(base(), owner.key, sent.body.transfer_id, 'completed');
    const words = 'USD main balance went below 440.00: 450.00 → 435.00';
    await region('Activity').getByText(words).waitFor({ timeout: 15_000 });
    await area('Overview');
    await page.getByRole('log', { name: 'Activity' }).getByRole('listitem').filter({ hasText: `balance.threshold_crossed ${words}` }).waitFor();

    await area('Alerts');
    await tabTo(page, /^Delete the alert below 440\.00 USD on Main balance$/);
    await page.keyboard.press('Enter');
    await focused('Alert below 440.00 USD on Main balance deleted.', 'the reader is told what happened');
    assert.deepEqual((await get('/v1/balance-alerts')).data, []);
    await region('Alerts').getByText('No alerts yet: create one.').waitFor();
  });

  for (const width of [1280, 375]) {
    it(`fits the new parts in their cards at ${width} px`, async () => {
      await call(base(), 'POST', '/v1/balance-alerts', { currency: 'USD', above: '1000.00' }, { token: owner.key, idempotencyKey: randomUUID() });
      await page.setViewportSize({ width, height: 900 });
      await area('Overview');
      await area('Alerts');
      await region('Alerts list').getByRole('row', { name: /^above 1000\.00 USD/ }).first().waitFor();
      await expectAccessible(`the Alerts area at ${width} px`);
      if (width === 1280) {
        // One more area in the top bar still leaves it one line on a laptop's screen.
        const top = async (name: string) => (await page.getByRole('banner').getByText(name, { exact: true }).boundingBox())!.y;
        assert.ok(Math.abs(await top('Sign out') - await top('Payments sandbox')) < 12, 'Sign out stays on the top bar\'s one line');
        await screenshot(page, 'alerts');
      }
      await area('Transfers');
      await chooseCsv(`recipient_email,amount,currency,note\n${friend.email},1.00,USD,a note long enough to need room on a phone\nnobody-${randomUUID()}@example.com,1.00,USD,\n`);
      await setAtomic(false);
      await sendBatch();
      await region('Batch items').getByRole('row').nth(2).waitFor();
      await expectAccessible(`a batch's outcome at ${width} px`);
      if (width === 375) await screenshot(page, 'transfer-batch-375');
      await area('Overview');
      await balancesAt(earlier);
      await region('Balances').getByRole('row', { name: /^USD\s+475\.00/ }).waitFor();
      await expectAccessible(`the overview's balances at an instant at ${width} px`);
    });
  }
});
