// What a partner says enters ledger commands screened (src/partners/screen.ts), end to end against
// the real mock rails, Kafka and Postgres: a failure message with NUL, control characters, an
// unpaired surrogate and 100 KB of text (the rails' failure-message control) fails the transfer or
// payment with the partner's reason cleaned and bounded, the hold released, and nothing
// dead-lettered. Before, the NUL failed the ledger's write: the command was dead-lettered and the
// payment stayed open with its funds held.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { deadLetterTopic, TOPICS } from '../../src/kafka/topics';
import { railsUrl, testService } from '../hooks';
import { createCustomer, type SignedUp } from '../support/accounts';
import { call } from '../support/http';
import { balances, fund, payerAndPayee, transferReaches } from '../support/money';
import { linkCustomer } from '../support/partner-links';
import { controlHeaders } from '../support/secrets';

const REASON = 'the beneficiary bank says no';
const HOSTILE = `${REASON}\u0000\u0007\u001b[31m\r\n\u2028\ud800 and `;
const HOSTILE_CHARS = 100 * 1024;

describe('partner text in ledger commands', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  let owner: SignedUp;
  let friend: SignedUp;

  /** Messages dead-lettered from ledger.commands so far, on every partition. */
  const deadLettered = async () => {
    const { runtime } = testService();
    const offsets = await runtime.admin.fetchTopicOffsets(runtime.names.full(deadLetterTopic(TOPICS.ledgerCommands)));
    return offsets.reduce((sum, p) => sum + Number(p.high), 0);
  };
  /** The fiat rail's next failure answers with 100 KB of hostile text. */
  const hostileFailure = async () => {
    const set = await call(`${railsUrl()}/fiat`, 'POST', '/_control/failure-message?count=1', { message: HOSTILE, repeat: Math.ceil(HOSTILE_CHARS / HOSTILE.length) }, { headers: controlHeaders() });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.ok(set.body.chars >= HOSTILE_CHARS);
  };
  /** What the client sees of the partner's reason: ours first, then the partner's, cleaned and bounded. */
  const assertScreened = (message: string) => {
    assert.ok(message.includes(REASON), message.slice(0, 200));
    assert.doesNotMatch(message, /[\u0000-\u001f\u007f-\u009f\u2028]/, 'no control characters');
    assert.ok(message.isWellFormed(), 'no unpaired surrogate');
    assert.ok(message.length <= 500, `bounded: ${message.length} characters`);
  };

  before(async function () {
    this.timeout(30_000);
    [owner, friend] = await payerAndPayee(base(), 'USD', '100.00');
    await fund(base(), owner.key, 'EUR', '100.00');
  });
  afterEach(async () => {
    await call(`${railsUrl()}/fiat`, 'POST', '/_control/failure-message?count=0', { message: 'none' }, { headers: controlHeaders() });
  });

  it('fails a transfer the partner declines with hostile text, releases the funds, and dead-letters nothing', async () => {
    const before = await deadLettered();
    await hostileFailure();
    const viban = friend.vibans.find((v) => v.currency === 'USD')!;
    const recipient = { email: friend.email, name: 'Friend', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: 'USD' } };
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient, amount: '10.00', currency: 'USD' },
      { token: owner.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'decline' } });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const failed = await transferReaches(base(), owner.key, sent.body.transfer_id, 'failed');
    assert.equal(failed.failure.code, 'partner_declined');
    assertScreened(failed.failure.message);
    assert.deepEqual(await balances(base(), owner.token).then((b) => [b.USD.available, b.USD.pending]), ['100.00', '0.00']);
    assert.equal(await deadLettered(), before, 'nothing dead-lettered');
  });

  it('fails a payment the partner declines with hostile text, releases its hold, and dead-letters nothing', async () => {
    const customerId = (await createCustomer(base(), owner.key)).body.id;
    await linkCustomer(base(), owner.key, customerId, 'fiat');
    const before = await deadLettered();
    await hostileFailure();
    const payee = {
      email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: 'GB', kind: 'personal',
      bank: { iso_country_code: 'DE', bank_name: 'Bank', currency_code: 'EUR', bank_account_number: 'DE89370400440532013000' },
    };
    const sent = await call(base(), 'POST', '/v1/payments/send', { customer_id: customerId, partner: 'fiat', amount: '12.00', currency: 'EUR', purpose: 'invoice 8', payee },
      { token: owner.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'decline' } });
    assert.deepEqual([sent.status, sent.body.status, sent.body.failure?.code], [201, 'failed', 'partner_declined'], JSON.stringify(sent.body).slice(0, 300));
    assertScreened(sent.body.failure.message);
    assert.deepEqual(await balances(base(), owner.token).then((b) => [b.EUR.available, b.EUR.pending]), ['100.00', '0.00']);
    assert.equal(await deadLettered(), before, 'nothing dead-lettered');
  });
});
