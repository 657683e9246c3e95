// Transfers end to end (SPEC.md sections 3, 4 and 7): HTTP → Kafka → ledger → Postgres, and
// back; external transfers through the partner rail, with the failures a client asks for by
// the Sandbox-Scenario header.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money } from '../../ledger/money';
import { TOPICS } from '../../src/kafka/topics';
import { PartnerClient } from '../../src/partners/client';
import { railsUrl, testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { balances, fund, transfer, transferReaches } from '../support/money';

describe('transfers', () => {
  let base: string;
  let alice: SignedUp;
  let bob: SignedUp;
  before(async () => {
    base = testService().baseUrl;
    [alice, bob] = await Promise.all([signUp(base), signUp(base)]);
    await fund(base, alice.key, 'USD', '1000.00');
  });

  it('lists transactions newest first, by cursor or offset, and refuses a cursor from another account', async () => {
    const carol = await signUp(base);
    for (const amount of ['1.00', '2.00', '3.00']) await fund(base, carol.key, 'USD', amount);
    const list = (query: string, key = carol.key) => call(base, 'GET', `/v1/transactions?${query}`, undefined, { token: key });
    const amounts = (page: { data: Array<{ amount: string }> }) => page.data.map((t) => t.amount);

    const first = await list('limit=2');
    assert.equal(first.status, 200);
    assert.deepEqual(amounts(first.body), ['3.00', '2.00']);
    assert.equal(first.body.has_more, true);
    assert.equal(first.body.next_cursor, first.body.data[1].id);
    const rest = await list(`limit=2&before=${first.body.next_cursor}`);
    assert.deepEqual(amounts(rest.body), ['1.00']);
    assert.equal(rest.body.has_more, false);
    assert.equal(rest.body.next_cursor, null);
    assert.deepEqual(amounts((await list('limit=1&offset=1')).body), ['2.00']);

    const alices = await list('limit=1', alice.key);
    expectError(await list(`before=${alices.body.data[0].id}`), 400, 'invalid_request', 'before', "another account's transaction as the cursor");
    expectError(await list(`before=${randomUUID()}`), 400, 'invalid_request', 'before', 'a cursor that names nothing');
    expectError(await list(`before=${first.body.next_cursor}&offset=1`), 400, 'invalid_request', 'offset', 'before and offset together');
  });

  describe('internal (recipient_email)', () => {
    it('moves money at once: 201 completed, balances of both sides, one debit and one credit', async () => {
      const response = await transfer(base, alice.key, { recipient_email: bob.email, amount: '25.10', currency: 'USD', note: 'lunch' });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      assert.match(response.body.transfer_id, /^[0-9a-f-]{36}$/);
      assert.equal(response.body.status, 'completed');
      assert.equal(response.body.amount, '25.10');
      assert.equal(response.body.currency, 'USD');
      assert.equal(typeof response.body.estimated_arrival, 'string');
      assert.match(response.body.partner_payment_id, /^book_/);

      const [a, b] = await Promise.all([balances(base, alice.token), balances(base, bob.token)]);
      assert.equal(a.USD.available, '974.90');
      assert.equal(b.USD.available, '25.10');

      const fetched = await call(base, 'GET', `/v1/transfers/${response.body.transfer_id}`, undefined, { token: alice.key });
      assert.equal(fetched.status, 200);
      assert.deepEqual(fetched.body.status_history.map((h: any) => h.to), ['pending', 'quoting', 'executing', 'completed']);

      const bobs = await call(base, 'GET', '/v1/transactions?limit=1', undefined, { token: bob.key });
      assert.equal(bobs.body.data[0].transfer_id, response.body.transfer_id);
      assert.equal(bobs.body.data[0].direction, 'credit');
      assert.equal(bobs.body.data[0].balance_after, '25.10');
    });

    it('replays the same Idempotency-Key with 200 and the same body, without a second debit', async () => {
      const key = randomUUID();
      const body = { recipient_email: bob.email, amount: '1.00', currency: 'USD' };
      const before = await balances(base, alice.token);
      const first = await transfer(base, alice.key, body, key);
      const again = await transfer(base, alice.key, body, key);
      assert.equal(first.status, 201);
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, first.body);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      const after = await balances(base, alice.token);
      assert.equal(new Money(before.USD.available).minus(after.USD.available).toFixed(2), '1.00');
    });

    it('refuses with the error body and changes no balance', async () => {
      const phantom = await signUp(base, { vibans: false });
      const noWallet = await signUp(base);
      const table: Array<[string, Record<string, unknown>, SignedUp, number, string, string | null]> = [
        ['amount as a JSON number', { recipient_email: bob.email, amount: 5, currency: 'USD' }, alice, 400, 'invalid_request', 'amount'],
        ['too many decimals', { recipient_email: bob.email, amount: '5.001', currency: 'USD' }, alice, 400, 'invalid_request', 'amount'],
        ['zero', { recipient_email: bob.email, amount: '0.00', currency: 'USD' }, alice, 400, 'invalid_request', 'amount'],
        ['negative', { recipient_email: bob.email, amount: '-5.00', currency: 'USD' }, alice, 400, 'invalid_request', 'amount'],
        ['unknown currency', { recipient_email: bob.email, amount: '5.00', currency: 'XYZ' }, alice, 400, 'invalid_currency', 'currency'],
        ['neither recipient form', { amount: '5.00', currency: 'USD' }, alice, 400, 'invalid_request', 'recipient_email'],
        ['unknown recipient', { recipient_email: 'nobody-' + randomUUID() + '@example.com', amount: '5.00', currency: 'USD' }, alice, 422, 'recipient_not_found', 'recipient_email'],
        ['recipient without rails', { recipient_email: phantom.email, amount: '5.00', currency: 'USD' }, alice, 422, 'phantom_recipient', 'recipient_email'],
        ['stablecoin without a chain wallet', { recipient_email: bob.email, amount: '5.00', currency: 'USDC' }, noWallet, 422, 'sender_no_chain_wallet', 'currency'],
        ['more than the balance', { recipient_email: bob.email, amount: '100000.00', currency: 'USD' }, alice, 422, 'insufficient_funds', 'amount'],
        ['bank details of nobody', { recipient: { email: 'x@example.com', name: 'X', bank: { country: 'DE', bank_name: 'Nobank', account_number: 'DE00123412341234123412', currency: 'USD' } }, amount: '5.00', currency: 'USD' }, alice, 400, 'external_send_blocked', 'recipient.bank.account_number'],
      ];
      const before = await balances(base, alice.token);
      for (const [name, body, sender, status, code, details] of table) {
        const response = await transfer(base, sender.key, body);
        assert.equal(response.status, status, `${name}: ${JSON.stringify(response.body)}`);
        assert.equal(response.body.success, false, name);
        assert.equal(response.body.error, code, name);
        assert.equal(response.body.details, details, name);
      }
      assert.deepEqual(await balances(base, alice.token), before);
    });

    it('refuses money movement from an account whose KYB is not active', async () => {
      const pending = await signUp(base, { kyb_status: 'pending' });
      const response = await transfer(base, pending.key, { recipient_email: bob.email, amount: '1.00', currency: 'USD' });
      assert.equal(response.status, 403);
      assert.equal(response.body.error, 'account_not_active');
    });
  });

  it('a KYB change takes effect on the next request, for a key that was just used', async () => {
    const [henry, ivy] = await Promise.all([signUp(base), signUp(base)]);
    await fund(base, henry.key, 'USD', '5.00');
    const master = testService().config.masterKey;
    const suspend = await call(base, 'PATCH', `/v1/sandbox/accounts/${henry.account.id}`, { kyb_status: 'suspended' }, { token: master, idempotencyKey: randomUUID() });
    assert.equal(suspend.status, 200);
    const refused = await transfer(base, henry.key, { recipient_email: ivy.email, amount: '1.00', currency: 'USD' });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error, 'account_not_active');
    await call(base, 'PATCH', `/v1/sandbox/accounts/${henry.account.id}`, { kyb_status: 'active' }, { token: master, idempotencyKey: randomUUID() });
    assert.equal((await transfer(base, henry.key, { recipient_email: ivy.email, amount: '1.00', currency: 'USD' })).status, 201);
  });

  describe('reading transfers', () => {
    it('lists the caller\'s transfers newest first with the list envelope', async () => {
      const carol = await signUp(base);
      await fund(base, carol.key, 'EUR', '10.00');
      const ids: string[] = [];
      for (const amount of ['1.00', '2.00', '3.00']) ids.push((await transfer(base, carol.key, { recipient_email: bob.email, amount, currency: 'EUR' })).body.transfer_id);
      const page = await call(base, 'GET', '/v1/transfers?limit=2', undefined, { token: carol.key });
      assert.equal(page.status, 200);
      assert.deepEqual(page.body.data.map((t: any) => t.transfer_id), [ids[2], ids[1]]);
      assert.equal(page.body.has_more, true);
      const rest = await call(base, 'GET', `/v1/transfers?limit=2&before=${page.body.next_cursor}`, undefined, { token: carol.key });
      assert.deepEqual(rest.body.data.map((t: any) => t.transfer_id), [ids[0]]);
      assert.equal(rest.body.has_more, false);
      assert.equal(rest.body.next_cursor, null);
    });

    it('answers 404 transfer_not_found and 403 cross_account_access_denied', async () => {
      const missing = await call(base, 'GET', `/v1/transfers/${randomUUID()}`, undefined, { token: alice.key });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error, 'transfer_not_found');
      const mine = await transfer(base, alice.key, { recipient_email: bob.email, amount: '1.00', currency: 'USD' });
      const theirs = await call(base, 'GET', `/v1/transfers/${mine.body.transfer_id}`, undefined, { token: bob.key });
      assert.equal(theirs.status, 403);
      assert.equal(theirs.body.error, 'cross_account_access_denied');
    });
  });

  describe('external (recipient.bank) through the fiat rail', () => {
    const bankOf = (who: SignedUp, currency = 'USD') => {
      const viban = who.vibans.find((v) => v.currency === currency)!;
      return { email: who.email, name: 'Bob', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency } };
    };

    it('holds the amount while executing, then settles to the matching sandbox account', async () => {
      const dave = await signUp(base);
      await fund(base, dave.key, 'USD', '100.00');
      const response = await transfer(base, dave.key, { recipient: bankOf(bob), amount: '40.00', currency: 'USD' });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      assert.equal(response.body.status, 'executing');
      const done = await transferReaches(base, dave.key, response.body.transfer_id, 'completed');
      assert.match(done.partner_payment_id, /^fiat_/);
      assert.deepEqual(done.status_history.map((h: any) => [h.from, h.to]), [[null, 'pending'], ['pending', 'quoting'], ['quoting', 'executing'], ['executing', 'completed']]);
      const after = await balances(base, dave.token);
      assert.deepEqual(after.USD, { currency: 'USD', amount: '60.00', available: '60.00', pending: '0.00', held: '0.00' });
    });

    const scenarios: Array<[string, string, string, string]> = [
      ['outage', 'a rail outage that is retried, then succeeds', 'completed', '89.87'],
      ['lost_answer', 'the rail paid but its answer was lost: found by reference, completed, paid once', 'completed', '89.87'],
      ['slow_answer', 'the rail paid and answers only after our timeout: found by reference, completed, never failed, paid once', 'completed', '89.87'],
      ['decline', 'a hard decline: failed, hold released', 'failed', '100.00'],
      ['error', 'a rail error with no payment behind it: failed after the checks, hold released', 'failed', '100.00'],
      ['reverse', 'a reversal after execution: rolled_back, hold released', 'rolled_back', '100.00'],
    ];
    for (const [scenario, name, status, available] of scenarios) {
      it(`Sandbox-Scenario ${scenario}: ${name}`, async function () {
        this.timeout(60_000);
        const erin = await signUp(base);
        await fund(base, erin.key, 'USD', '100.00');
        const recipientBefore = (await balances(base, bob.token)).USD.available;
        const response = await call(base, 'POST', '/v1/transfers', { recipient: bankOf(bob), amount: '10.13', currency: 'USD' },
          { token: erin.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': scenario } });
        assert.equal(response.status, 201, JSON.stringify(response.body));
        const final = await transferReaches(base, erin.key, response.body.transfer_id, status, 45_000);
        // A payment the partner made is never shown failed on the way (its hold released, then taken again).
        if (status === 'completed') assert.deepEqual(final.status_history.map((h: any) => h.to), ['pending', 'quoting', 'executing', 'completed']);
        const after = await balances(base, erin.token);
        assert.equal(after.USD.available, available);
        assert.equal(after.USD.pending, '0.00');
        const received = new Money((await balances(base, bob.token)).USD.available).minus(recipientBefore).toFixed(2);
        assert.equal(received, status === 'completed' ? '10.13' : '0.00', 'the recipient is credited once, and only for a completed transfer');
        if (status !== 'completed') assert.ok(final.failure?.code, 'a failed or rolled back transfer says why');
      });
    }

    it('a partner that pays a transfer after it failed: completed through the ledger, the amount held again (what the balance no longer covers owed), the recipient paid once', async function () {
      this.timeout(60_000);
      const { runtime } = testService();
      const gina = await signUp(base);
      await fund(base, gina.key, 'USD', '100.00');
      const recipientBefore = (await balances(base, bob.token)).USD.available;
      const sent = await call(base, 'POST', '/v1/transfers', { recipient: bankOf(bob), amount: '10.13', currency: 'USD' },
        { token: gina.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'error' } });
      const transferId: string = sent.body.transfer_id;
      const failed = await transferReaches(base, gina.key, transferId, 'failed');
      assert.equal(failed.failure.code, 'partner_error');
      // The sender spends most of the released amount meanwhile.
      await transfer(base, gina.key, { recipient_email: bob.email, amount: '95.00', currency: 'USD' });
      // The partner made the payment after all (an answer that came too late), and a copy of the
      // instruction is delivered again, as an outbox round published twice delivers it.
      const { config } = runtime;
      const rail = new PartnerClient({ baseUrl: `${railsUrl()}/fiat`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret });
      const paid = await rail.submitPayment({ reference: transferId, amount: '10.13', currency: 'USD' });
      const instruction = {
        id: `execute:${transferId}:0`, type: 'transfer.execute', partner: 'fiat', resource_id: transferId, account_id: gina.account.id,
        issued_at: new Date().toISOString(),
        payload: JSON.stringify({ transfer_id: transferId, amount: '10.13', currency: 'USD', attempt: 0, beneficiary: {}, scenario: 'error' }),
      };
      await runtime.producer.send({
        topic: runtime.names.full(TOPICS.partnerCommands), acks: -1,
        messages: [{ key: transferId, value: await runtime.codec.encode(TOPICS.partnerCommands, instruction) }],
      });
      const done = await transferReaches(base, gina.key, transferId, 'completed');
      assert.equal(done.partner_payment_id, paid.id);
      assert.equal(done.failure, null);
      assert.deepEqual(done.late_completion && [done.late_completion.failure_code, done.late_completion.receivable], ['partner_error', '5.13']);
      assert.deepEqual(done.status_history.map((h: any) => h.to), ['pending', 'quoting', 'executing', 'failed', 'completed']);
      const after = await balances(base, gina.token);
      assert.deepEqual([after.USD.available, after.USD.pending], ['0.00', '0.00'], 'never below zero: the 5.13 not covered is owed');
      const received = new Money((await balances(base, bob.token)).USD.available).minus(recipientBefore).toFixed(2);
      assert.equal(received, '105.13', 'the 95.00 and the 10.13 paid by the partner, once');
      const events = await call(base, 'GET', `/v1/events?limit=20`, undefined, { token: gina.key });
      assert.ok(events.body.data.some((e: any) => e.type === 'transfer.completed' && e.resource_id === transferId), 'transfer.completed announced');
    });

    it('fails only on request: amounts whose cents once meant a failure complete', async () => {
      const frank = await signUp(base);
      await fund(base, frank.key, 'USD', '100.00');
      const sent = await Promise.all(['10.13', '10.55', '10.66', '10.77', '10.99'].map((amount) => transfer(base, frank.key, { recipient: bankOf(bob), amount, currency: 'USD' })));
      for (const response of sent) await transferReaches(base, frank.key, response.body.transfer_id, 'completed');
      assert.equal((await balances(base, frank.token)).USD.available, '46.90');
    });

    it('refuses an unknown scenario, naming the header; the same key with another scenario is another request', async () => {
      const body = { recipient: bankOf(bob), amount: '1.00', currency: 'USD' };
      const send = (key: string, scenario?: string) => call(base, 'POST', '/v1/transfers', body, { token: alice.key, idempotencyKey: key, headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
      expectError(await send(randomUUID(), 'explode'), 400, 'invalid_request', 'Sandbox-Scenario');
      const key = randomUUID();
      assert.equal((await send(key, 'decline')).status, 201);
      expectError(await send(key), 409, 'idempotency_conflict');
      expectError(await send(key, 'reverse'), 409, 'idempotency_conflict');
    });
  });

  describe('stablecoins on the chain rail', () => {
    it('moves USDC between two chain wallets and rolls it into the USD total', async () => {
      const [frank, grace] = await Promise.all([signUp(base, { chain_wallet: true }), signUp(base, { chain_wallet: true })]);
      await fund(base, frank.key, 'USDC', '5.000000');
      const response = await transfer(base, frank.key, { recipient_email: grace.email, amount: '1.250000', currency: 'USDC' });
      assert.equal(response.status, 201, JSON.stringify(response.body));
      assert.equal(response.body.amount, '1.250000');
      await transferReaches(base, frank.key, response.body.transfer_id, 'completed');
      const totals = await balances(base, grace.token);
      assert.equal(totals.USD.available, '1.25');
    });
  });
});
