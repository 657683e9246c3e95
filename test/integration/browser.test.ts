// The pages a person uses, in a real browser (Debian's Chromium, driven by playwright-core): a
// customer approves a partner link on the partner's consent page and lands on the service's
// callback page; a payee opens a claim link and claims the payment with its button. Chromium is
// installed by `scripts/stack.sh tools`, which `npm test` runs.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { testService } from '../hooks';
import { type SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { fund } from '../support/money';
import { ownerWithCustomer } from '../support/partner-links';


describe('the partner pages in a browser', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  let browser: Browser;
  let owner: SignedUp;
  let customerId: string;
  before(async () => {
    browser = await launchChromium();
    ({ owner, customerId } = await ownerWithCustomer(base()));
  });
  after(async () => browser?.close());

  it('links a customer: the consent page\'s Allow button leads to the linked page, and the link is active', async () => {
    const created = await call(base(), 'POST', `/v1/customers/${customerId}/partner-links`, { partner: 'claimless' }, { token: owner.key, idempotencyKey: randomUUID() });
    const page = await browser.newPage();
    await page.goto(created.body.authorize_url);
    assert.match(await page.title(), /authorize access/);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.pathname === '/v1/partner-links/callback');
    assert.equal(await page.locator('h1').textContent(), 'Account linked');
    const links = await call(base(), 'GET', `/v1/customers/${customerId}/partner-links`, undefined, { token: owner.key });
    assert.equal(links.body.data.find((l: { id: string }) => l.id === created.body.id).status, 'active');
    await page.close();
  });

  it('shows a payee the claim page, and its Claim button completes the payment', async () => {
    await fund(base(), owner.key, 'USD', '20.00');
    const sent = await call(base(), 'POST', '/v1/payments/send', {
      customer_id: customerId, partner: 'claimless', amount: '12.50', currency: 'USD', purpose: 'a gift',
      payee: { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper', country_code: 'US', kind: 'personal' },
    }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const page = await browser.newPage();
    await page.goto(sent.body.claim_link);
    assert.match(await page.locator('h1').textContent() ?? '', /12\.50 USD/);
    await page.getByRole('button', { name: /Claim/ }).click();
    await page.waitForSelector('text=Claimed');
    const payment = await eventually(async () => {
      const now = (await call(base(), 'GET', `/v1/payments/${sent.body.id}`, undefined, { token: owner.key })).body;
      return now.status === 'completed' ? now : undefined;
    }, 10_000, 'the claimed payment completes');
    assert.ok(payment.completed_at);
    await page.close();
  });
});
