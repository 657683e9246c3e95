// Balance alerts (DESIGN.md section 5g): create, list, read and delete with the rules of every
// route (credentials, scopes, pk_ refused, 400 naming the field); `balance.threshold_crossed` once
// each time the available balance crosses the threshold, nothing while it stays beyond, again after
// it came back; and under 50 concurrent transfers exactly the crossings a model of the resulting
// sequence of postings finds, each with its balance before and after and its entry.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money, type Amount } from '../../ledger/money';
import { ALERTS_PER_BALANCE_MAX } from '../../src/balance-alerts/routes';
import { testService } from '../hooks';
import { createKey, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { balances, fund, transfer } from '../support/money';
import { startReceiver, verify } from '../support/webhook-receiver';
import { deliveries, subscribe } from '../support/webhooks';

const base = () => testService().baseUrl;

interface Crossing { alert_id: string; direction: string; balance_before: string; balance_after: string; entry_id: string; posting_id: string; wallet_id: string }

async function createAlert(key: string, body: Record<string, unknown>): Promise<string> {
  const response = await call(base(), 'POST', '/v1/balance-alerts', body, { token: key, idempotencyKey: randomUUID() });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body.id;
}

/** The account's balance.threshold_crossed events, oldest first, their attributes parsed. */
async function crossings(key: string): Promise<Array<{ id: string; resource_id: string; data: { amount: string; status: string } } & { attributes: Crossing }>> {
  const found = [];
  let before: string | null = null;
  for (;;) {
    const page: { status: number; body: any } = await call(base(), 'GET', `/v1/events?type=balance.threshold_crossed&limit=100${before ? `&before=${before}` : ''}`, undefined, { token: key });
    assert.equal(page.status, 200, JSON.stringify(page.body));
    found.push(...page.body.data);
    if (!page.body.has_more) break;
    before = page.body.next_cursor;
  }
  return found.reverse().map((e: any) => ({ ...e, attributes: JSON.parse(e.data.attributes) }));
}

/** The number of the account's latest event (0: none yet). */
async function lastSeq(accountId: string): Promise<number> {
  return Number((await testService().runtime.db('account_event_sequences').where('account_id', accountId).first())?.last_seq ?? 0);
}

async function pay(from: SignedUp, to: SignedUp, amount: string): Promise<void> {
  const response = await transfer(base(), from.key, { recipient_email: to.email, amount, currency: 'USD' });
  assert.equal(response.status, 201, JSON.stringify(response.body));
}

/** The available USD postings of the account in ledger order: each balance before and after. */
async function postingSequence(accountId: string): Promise<Array<{ id: string; entry_id: string; before: Amount; after: Amount }>> {
  const { rows } = await testService().runtime.db.raw(
    `SELECT p.id, p.entry_id, p.amount::text AS amount, p.balance_after::text AS balance_after FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id
      WHERE la.account_id = ? AND la.kind = 'available' AND la.currency = 'USD' ORDER BY p.seq`, [accountId]);
  return rows.map((r: any) => ({ id: r.id, entry_id: r.entry_id, before: new Money(r.balance_after).minus(r.amount), after: new Money(r.balance_after) }));
}

describe('balance alerts', () => {
  let alice: SignedUp;
  let bob: SignedUp;
  before(async () => {
    [alice, bob] = await Promise.all([signUp(base()), signUp(base())]);
  });

  it('creates, lists, reads and deletes an alert; refuses pk_, a missing scope and a bad body naming the field', async () => {
    const id = await createAlert(alice.key, { currency: 'USD', below: '100.00' });
    const got = await call(base(), 'GET', `/v1/balance-alerts/${id}`, undefined, { token: alice.key });
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.deepEqual([got.body.currency, got.body.wallet_id, got.body.below, got.body.above], ['USD', 'main', '100.00', null]);
    const listed = await call(base(), 'GET', '/v1/balance-alerts', undefined, { token: alice.key });
    assert.ok(listed.body.data.some((a: { id: string }) => a.id === id));
    expectError(await call(base(), 'GET', `/v1/balance-alerts/${id}`, undefined, { token: bob.key }), 404, 'resource_not_found', 'alert_id', 'another account\'s alert');
    const [publishable, reader, unrelated] = await Promise.all([
      createKey(base(), alice.token, 'publishable'), createKey(base(), alice.token, 'restricted', ['balance_alerts:read']), createKey(base(), alice.token, 'restricted', ['transfers:write']),
    ]);
    const routes: Array<[string, string, unknown, 'read' | 'write']> = [
      ['POST', '/v1/balance-alerts', { currency: 'USD', above: '5.00' }, 'write'], ['GET', '/v1/balance-alerts', undefined, 'read'],
      ['GET', `/v1/balance-alerts/${id}`, undefined, 'read'], ['DELETE', `/v1/balance-alerts/${randomUUID()}`, undefined, 'write'],
    ];
    for (const [method, path, body, access] of routes) {
      const as = (token?: string) => call(base(), method, path, body, { token, idempotencyKey: randomUUID() });
      expectError(await as(undefined), 401, 'authentication_required', undefined, `${method} ${path} without a credential`);
      expectError(await as(unrelated.key), 403, 'insufficient_scope', undefined, `${method} ${path} without a balance_alerts scope`);
      assert.equal((await as(publishable.key)).status, 403, `${method} ${path} with pk_`);
      if (access === 'write') expectError(await as(reader.key), 403, 'insufficient_scope', undefined, `${method} ${path} with balance_alerts:read only`);
      else assert.equal((await as(reader.key)).status, 200, `${method} ${path} with balance_alerts:read`);
    }
    const bad: Array<[unknown, string]> = [
      [{ currency: 'USD' }, 'below'], [{ currency: 'USD', below: '1.00', above: '2.00' }, 'above'], [{ currency: 'USD', below: 10 }, 'below'],
      [{ currency: 'USD', below: '1.001' }, 'below'], [{ currency: 'XYZ', below: '1.00' }, 'currency'], [{ below: '1.00' }, 'currency'],
      [{ currency: 'USD', below: '1.00', wallet_id: 'nope' }, 'wallet_id'], [{ currency: 'USD', below: '1.00', colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of bad) {
      const response = await call(base(), 'POST', '/v1/balance-alerts', body, { token: alice.key, idempotencyKey: randomUUID() });
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body)}`);
      assert.equal(response.body.details, field, `${JSON.stringify(body)}: ${JSON.stringify(response.body)}`);
    }
    expectError(await call(base(), 'POST', '/v1/balance-alerts', { currency: 'USD', below: '1.00', wallet_id: randomUUID() }, { token: alice.key, idempotencyKey: randomUUID() }), 404, 'wallet_not_found', 'wallet_id');
    const deleted = await call(base(), 'DELETE', `/v1/balance-alerts/${id}`, undefined, { token: alice.key, idempotencyKey: randomUUID() });
    assert.deepEqual([deleted.status, deleted.body], [200, { id, deleted: true }]);
    expectError(await call(base(), 'GET', `/v1/balance-alerts/${id}`, undefined, { token: alice.key }), 404, 'resource_not_found');
  });

  it(`takes at most ${ALERTS_PER_BALANCE_MAX} alerts on one balance, however many are asked at once, and one more once one is deleted`, async () => {
    const owner = await signUp(base());
    const create = (body: Record<string, unknown>) => call(base(), 'POST', '/v1/balance-alerts', body, { token: owner.key, idempotencyKey: randomUUID() });
    const answers = await Promise.all(Array.from({ length: ALERTS_PER_BALANCE_MAX + 10 }, (_, i) => create({ currency: 'USD', below: `${i + 1}.00` })));
    const created = answers.filter((a) => a.status === 201);
    assert.equal(created.length, ALERTS_PER_BALANCE_MAX, answers.map((a) => a.status).join(','));
    for (const refused of answers.filter((a) => a.status !== 201)) expectError(refused, 422, 'balance_alert_limit_exceeded', 'wallet_id');
    // Another currency, or a wallet, is another balance.
    assert.equal((await create({ currency: 'EUR', below: '1.00' })).status, 201);
    const deleted = await call(base(), 'DELETE', `/v1/balance-alerts/${created[0].body.id}`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.equal((await create({ currency: 'USD', above: '500.00' })).status, 201, 'the room a deleted alert left');
    expectError(await create({ currency: 'USD', above: '501.00' }), 422, 'balance_alert_limit_exceeded', 'wallet_id');

    // A refusal is not kept under its key (README "Idempotency"): the key stays free, another body
    // under it is a request of its own (refused again while the balance is full, not 409), and
    // once an alert is deleted the same key makes the alert, once.
    const key = randomUUID();
    const underKey = (body: Record<string, unknown>) => call(base(), 'POST', '/v1/balance-alerts', body, { token: owner.key, idempotencyKey: key });
    expectError(await underKey({ currency: 'USD', above: '600.00' }), 422, 'balance_alert_limit_exceeded', 'wallet_id');
    expectError(await underKey({ currency: 'USD', above: '601.00' }), 422, 'balance_alert_limit_exceeded', 'wallet_id');
    const room = await call(base(), 'DELETE', `/v1/balance-alerts/${created[1].body.id}`, undefined, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(room.status, 200, JSON.stringify(room.body));
    const made = await underKey({ currency: 'USD', above: '601.00' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const replayed = await underKey({ currency: 'USD', above: '601.00' });
    assert.deepEqual([replayed.status, replayed.body.id], [200, made.body.id], 'kept once it was made: the same key and body replay it');
    expectError(await underKey({ currency: 'USD', above: '600.00' }), 409, 'idempotency_conflict');
  });

  it('fires once each time the balance crosses, nothing while it stays beyond, again after it came back', async () => {
    const carol = await signUp(base());
    const dave = await signUp(base());
    await fund(base(), carol.key, 'USD', '100.00');
    const below = await createAlert(carol.key, { currency: 'USD', below: '50.00' });
    const above = await createAlert(carol.key, { currency: 'USD', above: '80.00' });
    await pay(carol, dave, '30.00'); // 70: within both
    await pay(carol, dave, '30.00'); // 40: below 50
    await pay(carol, dave, '10.00'); // 30: stays below
    await fund(base(), carol.key, 'USD', '15.00'); // 45: stays below
    await fund(base(), carol.key, 'USD', '40.00'); // 85: back over 50, and above 80
    await fund(base(), carol.key, 'USD', '5.00'); // 90: stays above
    await pay(carol, dave, '45.00'); // 45: below 50 again
    const events = await crossings(carol.key);
    assert.deepEqual(events.map((e) => [e.resource_id, e.attributes.direction, e.attributes.balance_before, e.attributes.balance_after]), [
      [below, 'below', '70.00', '40.00'], [above, 'above', '45.00', '85.00'], [below, 'below', '90.00', '45.00'],
    ]);
    const sequence = await postingSequence(carol.account.id);
    for (const event of events) {
      const posting = sequence.find((p) => p.id === event.attributes.posting_id);
      assert.ok(posting, 'the event names the posting that crossed');
      assert.equal(posting.entry_id, event.attributes.entry_id, 'and its entry');
      assert.equal(event.data.amount, event.attributes.balance_after);
    }
    await call(base(), 'DELETE', `/v1/balance-alerts/${below}`, undefined, { token: carol.key, idempotencyKey: randomUUID() });
    await fund(base(), carol.key, 'USD', '10.00'); // 55
    await pay(carol, dave, '10.00'); // 45: below 50, but the alert is gone
    assert.equal((await crossings(carol.key)).length, 3, 'a deleted alert fires nothing');
    // A wallet's alert watches the wallet's available balance alone.
    const wallet = await call(base(), 'POST', '/v1/wallets', { name: 'Alerts' }, { token: carol.key, idempotencyKey: randomUUID() });
    const onWallet = await createAlert(carol.key, { currency: 'USD', wallet_id: wallet.body.id, above: '5.00' });
    const moved = await call(base(), 'POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: wallet.body.id, amount: '10.00', currency: 'USD' }, { token: carol.key, idempotencyKey: randomUUID() });
    assert.equal(moved.status, 201, JSON.stringify(moved.body));
    const last = (await crossings(carol.key)).slice(3);
    assert.deepEqual(last.map((e) => [e.resource_id, e.attributes.wallet_id, e.attributes.balance_before, e.attributes.balance_after]), [[onWallet, wallet.body.id, '0.00', '10.00']]);
  });

  it('delivers the crossing to a webhook endpoint subscribed to balance.threshold_crossed, through Kafka, signed', async () => {
    const [erin, frank] = [await signUp(base()), await signUp(base())];
    await fund(base(), erin.key, 'USD', '20.00');
    const [receiver, everything] = [await startReceiver(), await startReceiver()];
    try {
      const endpoint = await call(base(), 'POST', '/v1/webhooks', { url: receiver.url, events: ['balance.threshold_crossed'] }, { token: erin.key, idempotencyKey: randomUUID() });
      assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
      // Made after the first endpoint: an event recorded for it was weighed for the first in the same
      // statement (an event's deliveries to every endpoint are recorded at once).
      const witness = await subscribe(erin, everything.url);
      const from = await lastSeq(erin.account.id);
      const alert = await createAlert(erin.key, { currency: 'USD', below: '10.00' });
      await pay(erin, frank, '15.00'); // 20 → 5: crosses
      await pay(erin, frank, '1.00'); // stays below
      const [got] = await receiver.waitFor(1);
      assert.ok(verify(endpoint.body.secret, got.headers, got.body), 'signed');
      assert.deepEqual([got.event.type, got.event.resource_type, got.event.resource_id, got.event.data.status, got.event.data.amount], ['balance.threshold_crossed', 'balance_alert', alert, 'below', '5.00']);
      const attributes = got.event.data; // the client envelope sets the attributes into data (src/notifications/frame.ts)
      assert.deepEqual([attributes.balance_before, attributes.balance_after, attributes.threshold, attributes.wallet_id], ['20.00', '5.00', '10.00', 'main']);
      // Once the witness has a delivery of every event, the first endpoint's are all recorded.
      await eventually(async () => {
        const made = await testService().runtime.db('account_events').where('account_id', erin.account.id).where('account_seq', '>', from).pluck('id');
        const offered = new Set((await deliveries(erin, witness.id, '?limit=100')).map((d) => d.event_id));
        return made.length > 0 && made.every((id: string) => offered.has(id)) ? true : undefined;
      }, 10_000, 'a delivery of every event to the endpoint that takes every type');
      const recorded = await deliveries(erin, endpoint.body.id, '?limit=100');
      assert.deepEqual(recorded.map((d) => d.event_id), [got.event.id], 'only the crossing is delivered: the endpoint asked for nothing else, and the balance stayed below');
      assert.equal(receiver.received.length, 1);
    } finally {
      await receiver.close();
      await everything.close();
    }
  });

  it('fires exactly as often as the model of the sequence says under 50 concurrent transfers', async function () {
    this.timeout(120_000);
    await Promise.all([fund(base(), alice.key, 'USD', '60.00'), fund(base(), bob.key, 'USD', '60.00')]);
    const alerts = [
      { id: await createAlert(alice.key, { currency: 'USD', below: '50.00' }), direction: 'below', threshold: '50' },
      { id: await createAlert(alice.key, { currency: 'USD', above: '70.00' }), direction: 'above', threshold: '70' },
    ];
    const existing = (await crossings(alice.key)).length;
    const postedBefore = (await postingSequence(alice.account.id)).length;
    // 50 transfers at once, both ways between alice and bob, each 1.00..9.00: alice's balance swings around both thresholds.
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => {
      const amount = `${(i % 9) + 1}.00`;
      return i % 2 === 0 ? transfer(base(), alice.key, { recipient_email: bob.email, amount, currency: 'USD' }) : transfer(base(), bob.key, { recipient_email: alice.email, amount, currency: 'USD' });
    }));
    for (const response of results) assert.ok([201, 422].includes(response.status), JSON.stringify(response.body));
    // Whether the burst crossed depends on the order the ledger took it in; then a walk that crosses
    // both thresholds whatever it left: to 75.00, down to 45.00, up to 75.00 again.
    await fund(base(), bob.key, 'USD', '200.00');
    const left = new Money((await balances(base(), alice.token)).USD.available);
    if (left.isLessThan(75)) await pay(bob, alice, new Money(75).minus(left).toFixed(2));
    else if (left.isGreaterThan(75)) await pay(alice, bob, left.minus(75).toFixed(2));
    await pay(alice, bob, '30.00');
    await pay(bob, alice, '30.00');
    const sequence = (await postingSequence(alice.account.id)).slice(postedBefore);
    const expected = sequence.flatMap((p) => alerts.flatMap((a) => {
      const beyond = (v: Amount) => (a.direction === 'below' ? v.isLessThan(a.threshold) : v.isGreaterThan(a.threshold));
      return !beyond(p.before) && beyond(p.after) ? [`${a.id} ${p.id} ${p.before.toFixed(2)} → ${p.after.toFixed(2)}`] : [];
    }));
    assert.ok(expected.length >= 2, `the transfers crossed the thresholds (${expected.length} crossings)`);
    // The events are written in the rounds' transactions: all are there once the transfers are answered.
    const events = await eventually(async () => {
      const found = (await crossings(alice.key)).slice(existing);
      return found.length >= expected.length ? found : undefined;
    }, 10_000, 'the crossings');
    assert.deepEqual(events.map((e) => `${e.resource_id} ${e.attributes.posting_id} ${e.attributes.balance_before} → ${e.attributes.balance_after}`), expected);
    assert.equal(new Set(events.map((e) => e.id)).size, events.length, 'no event twice');
  });
});
