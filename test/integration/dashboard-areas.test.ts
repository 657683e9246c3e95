// The dashboard's areas beyond the overview and transfers, walked in Chromium as a person walks
// them: an FX quote counting down and converted (and one that expired, refused), a customer
// linked with partners through their consent pages, money added and sent, payments with their
// history and claim link, API keys created and revoked (and then refused by the API), request
// logs with their bodies, a webhook endpoint receiving a test event and a replay, the event list,
// the Finance area's statement, CSV, trial balance and reconciliation report, and the transactions
// narrowed by currency and by a transfer's metadata. axe-core checks
// each area; the Content-Security-Policy is never broken.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { closeDashboardWindow, type DashboardWindow, expectPageAccessible, openSignedInDashboard, screenshot } from '../support/browser';
import { call, eventually } from '../support/http';
import { fund } from '../support/money';
import { startReceiver, type Receiver } from '../support/webhook-receiver';
import { today } from '../support/days';

describe('the dashboard\'s areas in a browser', function () {
  this.timeout(120_000);
  const base = () => testService().baseUrl;
  let dashboard: DashboardWindow | undefined;
  let page: Page;
  let owner: SignedUp;

  before(async () => {
    owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '500.00');
    dashboard = await openSignedInDashboard(base(), owner.email);
    page = dashboard.page;
  });
  after(() => closeDashboardWindow(dashboard));

  /** No serious or critical accessibility violation, and nothing wider than the 1280 px window. */
  const expectAccessible = (what: string) => expectPageAccessible(page, what);
  const area = async (link: string, heading = link) => {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
  };
  const developers = async (link: string) => {
    await area('Developers', 'API keys');
    await page.getByRole('navigation', { name: 'Developers' }).getByRole('link', { name: link, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: link, exact: true }).waitFor();
  };
  const available = async (currency: string) => {
    const balance = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: owner.token });
    return balance.body.breakdown.find((b: { currency: string }) => b.currency === currency)?.available ?? '0.00';
  };

  it('draws the balance over 30 days on the overview, from the statement', async () => {
    const chart = page.getByRole('img', { name: /USD balance over the last 30 days/ });
    await chart.waitFor();
    assert.match(await chart.getAttribute('aria-label') ?? '', /0\.00 at the start, 500\.00 now, after 1 movement$/);
  });

  it('quotes a conversion with a countdown to its expiry, converts it, and refuses a quote that expired', async () => {
    await area('FX');
    const quote = page.getByRole('region', { name: 'Quote' });
    await quote.getByLabel('Amount to convert').fill('100.00');
    await quote.getByRole('button', { name: 'Get quote' }).click();
    const countdown = page.getByRole('timer');
    const first = Number(/Expires in (\d+) s/.exec(await countdown.textContent() ?? '')?.[1]);
    assert.ok(first > 0, 'the countdown shows the seconds left');
    await eventually(async () => {
      const left = Number(/Expires in (\d+) s/.exec(await countdown.textContent() ?? '')?.[1]);
      return left < first ? left : undefined;
    }, 5_000, 'the countdown to tick down');
    await expectAccessible('the FX area');
    await screenshot(page, 'fx');
    await page.getByRole('button', { name: 'Convert' }).click();
    const converted = await page.getByRole('status').filter({ hasText: 'Converted' }).textContent();
    assert.match(converted ?? '', /Converted 100\.00 USD into \d+\.\d{2} EUR/);
    assert.equal(await available('USD'), '400.00');
    assert.equal(await available('EUR'), /into (\d+\.\d{2}) EUR/.exec(converted ?? '')?.[1]);

    // A quote that expired in the meantime (sandbox time) is refused, and the message says so.
    const convertedId = await page.getByTestId('quote-id').textContent();
    await quote.getByRole('button', { name: 'Get quote' }).click();
    const quoteId = await eventually(async () => {
      const shown = await page.getByTestId('quote-id').textContent();
      return shown && shown !== convertedId ? shown : undefined;
    }, 10_000, 'a new quote');
    const expired = await call(base(), 'POST', `/v1/sandbox/fx/quotes/${quoteId}/expire`, undefined, { token: owner.key, idempotencyKey: `expire-${quoteId}` });
    assert.equal(expired.status, 200, JSON.stringify(expired.body));
    await page.getByRole('button', { name: 'Convert' }).click();
    assert.match(await page.getByRole('alert').textContent() ?? '', /expired/);
    assert.equal(await available('USD'), '400.00', 'nothing moved');
  });

  it('adds a customer, links it with partners through their consent pages, adds funds and sends a payment with a claim link', async () => {
    await area('Customers');
    const form = page.getByRole('region', { name: 'New customer' });
    await form.getByLabel('Customer email').fill('buyer@example.com');
    await form.getByLabel('Customer business name').fill('Buyer Ltd');
    await form.getByLabel('Customer country (ISO code)').fill('ZZ');
    await form.getByRole('button', { name: 'Add customer' }).click();
    await page.locator('#field-customer-country-error').waitFor();
    await form.getByLabel('Customer country (ISO code)').fill('GB');
    await form.getByRole('button', { name: 'Add customer' }).click();
    await page.getByRole('heading', { name: 'Partner links of Buyer Ltd' }).waitFor();

    const links = page.getByRole('region', { name: 'Partner links of Buyer Ltd' });
    for (const partner of ['openbank', 'claimless']) {
      await links.getByLabel('Partner', { exact: true }).selectOption(partner);
      const [consent] = await Promise.all([page.waitForEvent('popup'), links.getByRole('button', { name: 'Link' }).click()]);
      await consent.waitForURL(/authorize/);
      await consent.getByRole('button', { name: 'Allow' }).click();
      await consent.getByRole('heading', { name: 'Account linked' }).waitFor();
      await consent.close();
      await links.getByRole('row', { name: new RegExp(`${partner}\\s+active`) }).waitFor();
    }
    await expectAccessible('the customers area');
    await screenshot(page, 'customers');

    const addFunds = page.getByRole('region', { name: 'Add funds' });
    await addFunds.getByLabel('Amount to add').fill('25.00');
    await addFunds.getByRole('button', { name: 'Add funds' }).click();
    await addFunds.getByRole('status').filter({ hasText: 'Payment of 25.00 USD' }).waitFor();

    const send = page.getByRole('region', { name: 'Send a payment' });
    await send.getByLabel('Payment amount').fill('5.00');
    await send.getByLabel('Purpose').fill('a thank-you');
    await send.getByLabel('Payee email').fill('grace@example.com');
    await send.getByLabel('Payee first name').fill('Grace');
    await send.getByLabel('Payee last name').fill('Hopper');
    await send.getByLabel('Payee country (ISO code)').fill('ZZ');
    await send.getByRole('button', { name: 'Send payment' }).click();
    assert.match(await page.locator('#field-payee-country-error').textContent() ?? '', /country/i, "a country that is none is refused, next to the field");
    await send.getByLabel('Payee country (ISO code)').fill('US');
    await send.getByRole('button', { name: 'Send payment' }).click();
    const claim = send.getByRole('link', { name: 'Claim link' });
    await claim.waitFor();
    assert.match(await claim.getAttribute('href') ?? '', /^http/);
  });

  it('lists payments by status, with each one\'s status history and claim link', async () => {
    await area('Payments');
    const list = page.getByRole('region', { name: 'Payments list' });
    await list.getByRole('row', { name: /claimless\s+claimless\s+5\.00 USD/ }).waitFor();
    await list.getByRole('row', { name: /openbank\s+add_funds\s+25\.00 USD/ }).waitFor();
    await list.getByRole('button', { name: /Details of the claimless payment/ }).click();
    const detail = page.getByRole('region', { name: 'Payment details' });
    await detail.getByRole('link', { name: 'Open the payee\'s claim page' }).waitFor();
    assert.ok(await detail.getByRole('list', { name: 'Status history' }).getByRole('listitem').count() >= 1);
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.getByText('No payments failed yet').waitFor();
    await expectAccessible('the payments area');
    await screenshot(page, 'payments');
  });

  it('creates a restricted key shown once, which the API accepts until it is revoked here', async () => {
    await developers('API keys');
    const create = page.getByRole('region', { name: 'Create an API key' });
    await create.getByLabel('Key name').fill('reporting');
    await create.getByLabel('Key type').selectOption('restricted');
    await create.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#scopes-error').waitFor(); // no scope chosen
    await create.getByLabel('transfers:read').check();
    await create.getByRole('button', { name: 'Create key' }).click();
    const key = await page.getByTestId('secret').textContent() ?? '';
    assert.match(key, /^rk_/);
    assert.equal((await call(base(), 'GET', '/v1/transfers', undefined, { token: key })).status, 200);
    assert.equal((await call(base(), 'GET', '/v1/payments', undefined, { token: key })).status, 403, 'only its scope');
    await expectAccessible('the API keys area');
    await page.getByRole('button', { name: 'Done' }).click();

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke reporting' }).click();
    await page.getByRole('row', { name: /reporting\s+restricted.*revoked/ }).waitFor();
    const refused = await call(base(), 'GET', '/v1/transfers', undefined, { token: key });
    assert.deepEqual([refused.status, refused.body.error], [401, 'invalid_api_key']);
  });

  it('shows the request logs by status class, with a request\'s full bodies', async () => {
    await developers('Request logs');
    await page.getByLabel('Status class').selectOption('4xx');
    const list = page.getByRole('region', { name: 'Request logs list' });
    await list.getByRole('row', { name: /POST\s+\/v1\/customers\s+400/ }).waitFor();
    assert.equal(await list.getByRole('row', { name: /\s2\d\d\s/ }).count(), 0, 'only 4xx answers');
    await list.getByRole('button', { name: 'Bodies of POST /v1/customers answered 400' }).click();
    const bodies = page.getByRole('region', { name: 'Request', exact: true });
    assert.match(await bodies.getByLabel('Request body').textContent() ?? '', /"country_code": "ZZ"/);
    assert.match(await bodies.getByLabel('Response body').textContent() ?? '', /"error": "invalid_country_code"/);
    await expectAccessible('the request logs area');
  });

  describe('webhooks', () => {
    let receiver: Receiver;
    before(async () => { receiver = await startReceiver(); });
    after(async () => receiver?.close());

    it('adds an endpoint with its secret shown once, sends it a test event, and replays a delivery, each attempt listed', async () => {
      await developers('Webhooks');
      const form = page.getByRole('region', { name: 'Add an endpoint' });
      await form.getByLabel('Endpoint URL').fill('ftp://example.com/hooks');
      await form.getByRole('button', { name: 'Add endpoint' }).click();
      assert.match(await page.locator('#field-webhook-url-error').textContent() ?? '', /^url /, "the API's message next to the field");
      await form.getByLabel('Endpoint URL').fill(receiver.url);
      await form.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = await page.getByTestId('secret').textContent() ?? '';
      assert.match(secret, /^whsec_/);
      await page.getByRole('button', { name: 'Done' }).click();

      const deliveries = page.getByRole('region', { name: 'Deliveries' });
      await deliveries.getByRole('button', { name: 'Send test event' }).click();
      // The account's own events are delivered to the endpoint too: the test event's attempts are read in its own list.
      const testAttempts = deliveries.getByRole('list', { name: 'Attempts of the webhook.test delivery' });
      await testAttempts.getByText('Attempt 1: answered 200').waitFor();
      const [test] = await receiver.waitFor(1, (r) => r.event.type === 'webhook.test');
      assert.ok(test.headers['webhook-signature'], 'signed');
      await deliveries.getByRole('button', { name: 'Replay the webhook.test delivery' }).click();
      await testAttempts.getByText('Attempt 2: answered 200').waitFor();
      assert.equal((await receiver.waitFor(2, (r) => r.event.type === 'webhook.test')).length, 2);
      await expectAccessible('the webhooks area');
      await screenshot(page, 'webhooks');
    });
  });

  it('lists the account\'s events newest first, filtered by type', async () => {
    await developers('Events');
    const list = page.getByRole('list', { name: 'Events list' });
    await list.getByText('balance.updated').first().waitFor();
    await page.getByLabel(/Event type/).fill('payment.sent');
    await page.getByRole('button', { name: 'Filter events' }).click();
    await eventually(async () => {
      const types = await list.locator('.event-type').allTextContents();
      return types.length > 0 && types.every((type) => type === 'payment.sent') ? types : undefined;
    }, 10_000, 'only payment.sent events listed');
    await list.getByText('payment.sent').first().click();
    assert.match(await list.locator('pre').first().textContent() ?? '', /"resource_type": "payment"/, 'an event opens to its full body');
    await expectAccessible('the events area');
  });

  it('shows the statement with its CSV, and with the master key the trial balance and a reconciliation report', async () => {
    await area('Finance');
    const statement = page.getByRole('region', { name: 'Statement' });
    await statement.getByRole('button', { name: 'Show statement' }).click();
    await statement.getByTestId('closing-balance').filter({ hasText: `${await available('USD')} USD` }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), statement.getByRole('button', { name: 'Download CSV' }).click()]);
    const csv = readFileSync(await download.path(), 'utf8');
    assert.match(csv.split('\n')[0], /^entry_id,posted_at,amount,balance_after/);
    assert.match(csv, /500\.00/);
    assert.match(path.basename(download.suggestedFilename()), /^statement-USD-.*\.csv$/);

    await page.getByLabel('Master key').fill('not the master key');
    await page.getByRole('button', { name: 'Show trial balance' }).click();
    assert.match(await page.getByRole('region', { name: 'Trial balance' }).getByRole('alert').textContent() ?? '', /.+/);
    assert.ok(await page.getByRole('button', { name: 'Sign out' }).isVisible(), 'a wrong master key does not sign the session out');

    await page.getByLabel('Master key').fill(testService().config.masterKey);
    await page.getByRole('button', { name: 'Show trial balance' }).click();
    await page.getByText('debits equal credits in every currency.').waitFor();
    await page.getByRole('region', { name: 'Trial balance totals' }).getByRole('row', { name: /^USD / }).waitFor();

    const reconcile = page.getByRole('region', { name: 'Reconciliations' });
    await reconcile.getByLabel('Partner to reconcile').selectOption('openbank');
    await reconcile.getByLabel('Day to reconcile').fill(today());
    await reconcile.getByRole('button', { name: 'Reconcile' }).click();
    const report = page.getByRole('region', { name: /^Report: openbank/ });
    await report.waitFor();
    assert.match(await report.getByTestId('count-matched').textContent() ?? '', /^\d+$/);
    await reconcile.getByRole('row', { name: /openbank/ }).first().waitFor();
    await expectAccessible('the finance area');
    await screenshot(page, 'finance');
  });
  it('lists the account\'s transactions, narrowed by currency and by a transfer\'s metadata', async () => {
    const friend = await signUp(base());
    await fund(base(), owner.key, 'EUR', '20.00');
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient_email: friend.email, amount: '12.00', currency: 'USD', metadata: { order_id: 'T-7' } }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    await area('Overview');
    const rows = page.getByRole('list', { name: 'Transactions list' }).getByRole('listitem');
    await eventually(async () => ((await rows.count()) >= 3 ? true : undefined), 10_000, 'the three movements listed');
    await page.getByLabel('Transactions in currency').selectOption('EUR');
    // EUR movements alone: the test funds, and the conversion the FX area made.
    const eurOnly = async () => {
      const texts = await rows.allInnerTexts();
      return texts.length > 0 && texts.every((t) => / EUR\b/.test(t) && !/ USD\b/.test(t)) && texts.some((t) => /faucet credit\s+\+20\.00 EUR/.test(t)) ? texts : undefined;
    };
    await eventually(eurOnly, 10_000, 'the EUR movements alone');
    await page.getByLabel('Transactions in currency').selectOption('');
    await page.getByLabel('Metadata key').fill('order_id');
    await page.getByLabel('Metadata value').fill('T-7');
    await eventually(async () => ((await rows.count()) === 1 && /−12\.00 USD/.test(await rows.first().innerText()) ? true : undefined), 10_000, 'the transfer of order T-7 alone');
    await page.getByLabel('Metadata value').fill('T-8');
    await page.getByText('No transactions match these filters.').waitFor();
    await expectAccessible('the Transactions area');
  });
});
