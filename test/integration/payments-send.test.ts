// Sending payments (SPEC.md section 4, Payments; DESIGN.md section 5c): the ledger holds the
// amount first, then the partner pays: fiat to a bank payee at once, claimless by a claim link
// the payee claims on a page (or lets expire), chain in stablecoins after a confirmation. Every
// payee field is checked before anything moves.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money } from '../../ledger/money';
import { railsUrl, testService } from '../hooks';
import { createCustomer, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { fund } from '../support/money';
import { browse, ownerWithCustomer } from '../support/partner-links';
import { controlHeaders } from '../support/secrets';

const PERSON = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'GB', kind: 'personal' };
const BANK = { iso_country_code: 'DE', bank_name: 'Bank', currency_code: 'EUR', bank_account_number: 'DE89370400440532013000' };

describe('payments: send', () => {
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  let customerId: string;
  before(async function () {
    this.timeout(30_000);
    // USDC test funds need a chain wallet.
    ({ owner, customerId } = await ownerWithCustomer(base(), ['fiat', 'claimless', 'chain'], { chain_wallet: true }));
    for (const [currency, amount] of [['EUR', '1000.00'], ['GBP', '100.00'], ['USDC', '50.000000']]) await fund(base(), owner.key, currency, amount);
  });
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const send = (body: Record<string, unknown>, scenario?: string, idempotencyKey = randomUUID()) => call(base(), 'POST', '/v1/payments/send',
    { customer_id: customerId, partner: 'fiat', amount: '40.00', currency: 'EUR', purpose: 'invoice 7', payee: { ...PERSON, bank: BANK }, ...body },
    { token: owner.key, idempotencyKey, headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
  const breakdown = async (currency: string) => {
    const response = await call(base(), 'GET', '/v1/accounts/me/balance', undefined, { token: owner.token });
    const row = response.body.breakdown.find((b: { currency: string }) => b.currency === currency);
    return row ? [row.available, row.pending] : ['0', '0'];
  };
  const paymentOf = (id: string) => call(base(), 'GET', `/v1/payments/${id}`, undefined, { token: owner.key }).then((r) => r.body);
  const reaches = (id: string, status: string) => eventually(async () => {
    const now = await paymentOf(id);
    return now.status === status ? now : undefined;
  // The settler polls a young payment about every interval; on a loaded machine (three test
  // workers on two cores) a confirmation plus a poll took longer than 10 s once.
  }, 25_000, `payment ${id} to reach ${status}`);

  it('pays a bank payee through fiat at once: held, then paid out', async () => {
    const before = await breakdown('EUR');
    const key = randomUUID();
    const sent = await send({}, undefined, key);
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.deepEqual([sent.body.kind, sent.body.direction, sent.body.status, sent.body.purpose, sent.body.payee.bank.bank_name], ['send', 'outbound', 'completed', 'invoice 7', 'Bank']);
    assert.ok(sent.body.completed_at);
    assert.deepEqual(await breakdown('EUR'), [new Money(before[0]).minus(40).toFixed(2), '0.00']);
    const entries = await testService().runtime.db('journal_entries').where('payment_id', sent.body.id).orderBy('created_at');
    assert.deepEqual(entries.map((e: { kind: string }) => e.kind).sort(), ['payment_hold', 'payment_settle']);
    const replay = await send({}, undefined, key);
    assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed'), replay.body], [200, 'true', sent.body], 'the same key replays the answer');
    assert.deepEqual(await breakdown('EUR'), [new Money(before[0]).minus(40).toFixed(2), '0.00'], 'and pays nothing twice');
  });

  it('sends a claim link; the payee claims it on the claim page, and the held amount leaves', async () => {
    const sent = await send({ partner: 'claimless', amount: '25.00', currency: 'GBP', payee: PERSON });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.deepEqual([sent.body.kind, sent.body.status], ['claimless', 'sent']);
    assert.ok(sent.body.claim_link.startsWith(`${railsUrl()}/claimless/claim/`));
    assert.deepEqual(await breakdown('GBP'), ['75.00', '25.00'], 'held while unclaimed');
    const page = await browse(sent.body.claim_link);
    assert.equal(page.status, 200);
    assert.match(page.html, /25\.00 GBP/);
    assert.equal((await browse(sent.body.claim_link, { decision: 'claim' })).status, 200);
    const done = await reaches(sent.body.id, 'completed');
    assert.ok(done.completed_at);
    assert.deepEqual(await breakdown('GBP'), ['75.00', '0.00']);
  });

  it('cancels an unclaimed payment whose link expired, and releases the hold', async () => {
    const sent = await send({ partner: 'claimless', amount: '10.00', currency: 'GBP', payee: PERSON });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const externalId = sent.body.external_id;
    assert.equal((await call(`${railsUrl()}/claimless`, 'POST', `/_control/expire-claim/${externalId}`, undefined, { headers: controlHeaders() })).status, 200);
    const cancelled = await reaches(sent.body.id, 'cancelled');
    assert.equal(cancelled.failure.code, 'claim_expired');
    assert.equal((await browse(sent.body.claim_link)).status, 410);
    assert.deepEqual(await breakdown('GBP'), ['75.00', '0.00'], 'the hold is back');
  });

  it('pays stablecoins through chain after the confirmation', async () => {
    const sent = await send({ partner: 'chain', amount: '5.000000', currency: 'USDC', payee: PERSON });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    assert.equal(sent.body.status, 'sent');
    await reaches(sent.body.id, 'completed');
    assert.deepEqual(await breakdown('USDC'), ['45.000000', '0.000000']);
  });

  it('fails a declined payout and releases its hold', async () => {
    const before = await breakdown('EUR');
    const declined = await send({ amount: '12.00' }, 'decline');
    assert.deepEqual([declined.status, declined.body.status, declined.body.failure.code], [201, 'failed', 'partner_declined']);
    assert.deepEqual(await breakdown('EUR'), before);
  });

  it('simulates the next state on demand in the sandbox: settle, fail, cancel, expire a claim link', async () => {
    const simulate = (id: string, action: string) => call(base(), 'POST', `/v1/sandbox/payments/${id}/${action}`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    const chain = await send({ partner: 'chain', amount: '1.000000', currency: 'USDC', payee: PERSON });
    const settled = await simulate(chain.body.id, 'settle');
    assert.deepEqual([settled.status, settled.body.status], [200, 'completed']);
    expectError(await simulate(chain.body.id, 'fail'), 400, 'invalid_request', 'action');

    const before = await breakdown('GBP');
    const claim = await send({ partner: 'claimless', amount: '2.00', currency: 'GBP', payee: PERSON });
    const cancelled = await simulate(claim.body.id, 'cancel');
    assert.deepEqual([cancelled.body.status, cancelled.body.failure.code], ['cancelled', 'cancelled']);
    assert.equal((await browse(claim.body.claim_link)).status, 410, 'the link stops working');
    assert.deepEqual(await breakdown('GBP'), before, 'the hold is back');

    const expiring = await send({ partner: 'claimless', amount: '3.00', currency: 'GBP', payee: PERSON });
    assert.equal((await simulate(expiring.body.id, 'expire-claim')).body.failure.code, 'claim_expired');
    const failing = await send({ partner: 'claimless', amount: '4.00', currency: 'GBP', payee: PERSON });
    assert.deepEqual((await simulate(failing.body.id, 'fail')).body.failure.code, 'simulated_failure');
    assert.deepEqual(await breakdown('GBP'), before);
    const fiat = await send({ amount: '1.00' });
    expectError(await simulate(fiat.body.id, 'expire-claim'), 400, 'invalid_request', 'action');
    expectError(await simulate(randomUUID(), 'settle'), 404, 'payment_not_found');
    const stranger = await signUp(base());
    expectError(await call(base(), 'POST', `/v1/sandbox/payments/${failing.body.id}/settle`, undefined, { token: stranger.key, idempotencyKey: randomUUID() }), 403, 'cross_account_access_denied');
  });

  it('refuses what it cannot pay, holding nothing', async () => {
    const before = await breakdown('EUR');
    const count = async () => (await testService().runtime.db('payments').where('customer_id', customerId).count<{ count: string }[]>('* as count'))[0].count;
    const stored = await count();
    expectError(await send({ amount: '100000.00' }), 422, 'insufficient_funds', 'amount');
    expectError(await send({ payee: { ...PERSON, bank: { ...BANK, iso_country_code: 'JP' } } }), 503, 'corridor_unavailable', 'payee.bank.iso_country_code');
    expectError(await send({ partner: 'claimless', currency: 'GBP', payee: { ...PERSON, country_code: 'BR' } }), 503, 'corridor_unavailable', 'payee.country_code');
    expectError(await send({ payee: { ...PERSON, kind: 'business', business: { business_name: 'Acme' }, bank: BANK } }), 403, 'requires_action', 'payee.business.tax_id_number');
    expectError(await send({ payee: { ...PERSON, first_name: undefined, bank: BANK } }), 400, 'invalid_request', 'payee.first_name');
    expectError(await send({ payee: { ...PERSON, phone_number: '5550100', bank: BANK } }), 400, 'invalid_request', 'payee.phone_country_code');
    expectError(await send({ payee: { ...PERSON, bank: { ...BANK, currency_code: 'USD' } } }), 400, 'invalid_currency', 'payee.bank.currency_code');
    expectError(await send({ payee: PERSON }), 400, 'invalid_request', 'payee.bank');
    expectError(await send({ partner: 'openbank' }), 400, 'invalid_partner', 'partner');
    expectError(await send({ partner: 'chain', currency: 'USD', payee: PERSON }), 400, 'invalid_currency', 'currency');
    const unlinked = (await createCustomer(base(), owner.key)).body.id;
    expectError(await send({ customer_id: unlinked }), 400, 'customer_not_linked', 'customer_id');
    assert.deepEqual(await breakdown('EUR'), before);
    assert.equal(await count(), stored, 'no payment recorded');
  });
});
