// Webhook deliveries (DESIGN.md section 5d) to real HTTP receivers: signed the Standard Webhooks
// way (checked here apart from the service's code), every event of the account in its sequence,
// retried on failure with the same webhook-id, a Retry-After honoured, a hanging receiver unable
// to delay a healthy one, rotation, disabling (410 at once, or after failing for the configured
// time, announced by an event), inspection, retry, recovery, test events, a disabled endpoint's
// backlog delaying nobody, endpoints served in turns, events made while an endpoint is paused
// delivered when it is enabled, and a dispatcher killed mid-delivery losing nothing. The test
// service runs the schedule in seconds (test/support/service.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { ownerWithCustomer } from '../support/partner-links';
import { checkWebhookEvent } from '../support/contract';
import { expectError } from '../support/expect';
import { eventually } from '../support/http';
import { fund, transfer } from '../support/money';
import { WEBHOOK_TEST_SETTINGS } from '../support/service';
import { verify } from '../support/webhook-receiver';
import { deliveries, receiversClosedAfterEach, request, subscribe } from '../support/webhooks';
import { startRoles } from '../../src/roles';
import { PER_ENDPOINT } from '../../consumers/webhooks/runner';
import { WebhookDeliveries } from '../../src/webhooks/deliveries';
import { RESPONSE_BODY_KEPT } from '../../src/webhooks/post';

describe('webhook deliveries', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  const receiver = receiversClosedAfterEach();
  /** A funded sender and a recipient, both signed up, the sender's money already in. */
  const pair = async () => {
    const [sender, recipient] = [await signUp(base()), await signUp(base())];
    await fund(base(), sender.key, 'USD', '500.00');
    return { sender, recipient };
  };
  const pay = async (sender: SignedUp, recipient: SignedUp, amount = '1.00') => {
    const sent = await transfer(base(), sender.key, { recipient_email: recipient.email, amount, currency: 'USD' });
    assert.deepEqual([sent.status, sent.body.status], [201, 'completed'], JSON.stringify(sent.body));
    return sent.body;
  };
  /** The account's events after `afterSeq`, from the outbox, in its sequence. */
  const accountEvents = async (accountId: string, afterSeq: number) =>
    testService().runtime.db('account_events').where({ account_id: accountId }).where('account_seq', '>', afterSeq).orderBy('account_seq').select('id', 'account_seq', 'payload');
  const lastSeq = async (accountId: string) => Number((await testService().runtime.db('account_event_sequences').where('account_id', accountId).first())?.last_seq ?? 0);
  /**
   * Waits until `witness`, an endpoint of `owner` that takes every type, has a delivery of each of
   * the account's events after `afterSeq`: an event's deliveries to every endpoint are recorded in
   * one statement, so by then those of the endpoints made before the witness are recorded too.
   */
  const everyEventRecorded = (owner: SignedUp, witness: string, afterSeq: number) => eventually(async () => {
    const made = await accountEvents(owner.account.id, afterSeq);
    const recorded = new Set((await deliveries(owner, witness, '?limit=100')).map((d) => d.event_id));
    return made.length > 0 && made.every((e: { id: string }) => recorded.has(e.id)) ? true : undefined;
  }, 10_000, 'a delivery of every event to the endpoint that takes every type');
  /**
   * Returns once a claim of due deliveries began after the call: a test event is left due for the
   * next claim (delivery-routes.ts), and one statement claims what is due at every enabled endpoint,
   * so a delivery that claim did not take was not due.
   */
  const afterNextClaim = async (owner: SignedUp) => {
    const witness = await receiver();
    const endpoint = await subscribe(owner, witness.url);
    const sent = await request(owner, 'POST', `/v1/webhooks/${endpoint.id}/test`);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    await witness.waitFor(1, (g) => g.event.id === sent.body.event_id, 10_000);
  };

  it('delivers every event of the account, signed, in the SPEC.md envelope with its account_seq', async () => {
    const { sender, recipient } = await pair();
    const r = await receiver();
    const endpoint = await subscribe(sender, r.url);
    const from = await lastSeq(sender.account.id);
    for (let i = 0; i < 3; i++) await pay(sender, recipient);

    const expected = await accountEvents(sender.account.id, from); // committed before each 201
    assert.ok(expected.length >= 6, `two or more events per transfer (${expected.length})`);
    const got = await r.waitFor(expected.length);
    assert.deepEqual(new Set(got.map((g) => g.event.id)), new Set(expected.map((e: any) => e.id)), 'every event, no other');
    const types = new Set(got.map((g) => g.event.type));
    for (const type of ['transfer.completed', 'balance.updated']) assert.ok(types.has(type), type);
    for (const g of got) {
      assert.ok(verify(endpoint.secret, g.headers, g.body), 'the signature and timestamp check out');
      assert.equal(g.headers['webhook-id'], g.event.id, 'webhook-id is the event id');
      assert.equal(g.headers['content-type'], 'application/json');
      assert.deepEqual(Object.keys(g.event).sort(), ['account_seq', 'created_at', 'data', 'environment', 'id', 'resource_id', 'resource_type', 'type']);
      assert.equal(g.event.environment, 'sandbox');
      await checkWebhookEvent(base(), g.event);
    }
    const seqs = got.map((g) => g.event.account_seq).sort((a, b) => a - b);
    assert.deepEqual(seqs, expected.map((_: unknown, i: number) => from + 1 + i), 'account_seq numbers the account\'s events without gaps');
    const otherSecret = `${endpoint.secret.slice(0, 10)}${endpoint.secret[10] === 'A' ? 'B' : 'A'}${endpoint.secret.slice(11)}`;
    assert.ok(!verify(otherSecret, got[0].headers, got[0].body), 'another secret does not verify');
    assert.ok(!verify(endpoint.secret, got[0].headers, got[0].body.replace('"', ' "')), 'another body does not verify');
    const readme = await readFile(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
    const example = /```js\n(import \{ createHmac[\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(example, 'the README shows a verifying receiver');
    const file = path.join(tmpdir(), `verify-webhook-${randomUUID()}.mjs`);
    await writeFile(file, example);
    const { verifyWebhook } = await import(file);
    assert.ok(got.every((g) => verifyWebhook(endpoint.secret, g.headers, g.body)), 'the README\'s receiver accepts every delivery');
    assert.ok(!verifyWebhook(otherSecret, got[0].headers, got[0].body), 'and refuses another secret');
    assert.ok(!verifyWebhook(endpoint.secret, { ...got[0].headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 301) }, got[0].body), 'and a stale timestamp');

    const listed = await deliveries(sender, endpoint.id, '?limit=100');
    assert.equal(listed.length, expected.length);
    for (const d of listed) {
      assert.deepEqual([d.status, d.attempt_count, d.last_response_status, d.next_attempt_at], ['delivered', 1, 200, null]);
      assert.equal(d.attempts[0].response_body, 'ok');
    }
  });

  it('delivers a payment\'s events, and only the types the endpoint subscribed to', async () => {
    const { owner, customerId } = await ownerWithCustomer(base(), ['openbank']);
    const r = await receiver();
    const endpoint = await subscribe(owner, r.url, ['payment.sent', 'payment.completed']);
    const witness = await subscribe(owner, (await receiver()).url);
    const from = await lastSeq(owner.account.id);
    const created = await request(owner, 'POST', '/v1/payments/add-funds', { customer_id: customerId, partner: 'openbank', amount: '12.00', currency: 'USD' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const got = await r.waitFor(2);
    await everyEventRecorded(owner, witness.id, from);
    const recorded = await deliveries(owner, endpoint.id, '?limit=100');
    assert.deepEqual(recorded.map((d) => d.event_type).sort(), ['payment.completed', 'payment.sent'], 'nothing it did not ask for');
    assert.deepEqual(r.received.map((g) => [g.event.type, g.event.resource_type, g.event.data.id]),
      [['payment.sent', 'payment', created.body.id], ['payment.completed', 'payment', created.body.id]]);
    for (const g of got) assert.ok(verify(endpoint.secret, g.headers, g.body));
  });

  it('retries a 500 with the same webhook-id and a fresh signature, and lists both attempts', async () => {
    const { sender, recipient } = await pair();
    const r = await receiver((_, n) => (n === 1 ? { status: 500, body: 'try later' } : { status: 204 }));
    const endpoint = await subscribe(sender, r.url, ['transfer.completed']);
    await pay(sender, recipient);
    const [first, second] = await r.waitFor(2);
    assert.equal(second.headers['webhook-id'], first.headers['webhook-id']);
    assert.equal(second.body, first.body, 'the same bytes');
    assert.ok(verify(endpoint.secret, second.headers, second.body));
    assert.ok(second.at - first.at >= 80, 'after the first step of the schedule');
    const [delivery] = await eventually(async () => {
      const listed = await deliveries(sender, endpoint.id);
      return listed[0]?.status === 'delivered' ? listed : undefined;
    }, 5_000, 'the delivery recorded');
    assert.deepEqual(delivery.attempts.map((a: any) => [a.attempt, a.response_status, a.response_body]), [[2, 204, ''], [1, 500, 'try later']]);
    assert.equal(delivery.attempt_count, 2);
  });

  it('honours Retry-After, and gives up after the schedule, leaving the delivery failed', async () => {
    const { sender, recipient } = await pair();
    const r = await receiver((_, n) => (n === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 500, body: 'x'.repeat(5000) }));
    const endpoint = await subscribe(sender, r.url, ['transfer.completed']);
    await pay(sender, recipient);
    const [first, second] = await r.waitFor(2);
    assert.ok(second.at - first.at >= 950, `Retry-After: 1 waited ${second.at - first.at} ms`);
    const schedule = WEBHOOK_TEST_SETTINGS.WEBHOOK_RETRY_SCHEDULE_MS.split(',').length;
    await r.waitFor(schedule + 1);
    const [delivery] = await eventually(async () => {
      const listed = await deliveries(sender, endpoint.id);
      return listed[0]?.status === 'failed' ? listed : undefined;
    }, 10_000, 'the delivery to fail');
    assert.equal(delivery.attempt_count, schedule + 1, 'the first attempt and one per step');
    assert.equal(delivery.attempts[0].response_body, `${'x'.repeat(RESPONSE_BODY_KEPT)}…`, 'a long answer is kept truncated');
    assert.equal(delivery.next_attempt_at, null);
    await afterNextClaim(sender);
    assert.equal((await deliveries(sender, endpoint.id))[0].attempt_count, schedule + 1, 'no attempt after the last');
    assert.equal(r.received.length, schedule + 1);
  });

  it('does not let a receiver that hangs delay a healthy one', async () => {
    const { sender, recipient } = await pair();
    const hanging = await receiver(() => 'hang');
    const healthy = await receiver();
    await subscribe(sender, hanging.url);
    await subscribe(sender, healthy.url);
    const started = Date.now();
    const transfers = 12; // each makes at least 2 events of the sender: more than one endpoint may hold at once
    await Promise.all(Array.from({ length: transfers }, () => pay(sender, recipient)));
    const got = await healthy.waitFor(transfers * 2);
    const last = Math.max(...got.map((g) => g.at));
    assert.ok(hanging.received.length >= 16, `the hanging receiver holds its share of slots (${hanging.received.length})`);
    assert.equal(hanging.maxOpen, PER_ENDPOINT, 'never more attempts at once than one endpoint may hold');
    assert.ok(last - started < 8_000, `the healthy receiver had every event after ${last - started} ms`);
  });

  it('signs with both secrets during a rotation', async () => {
    const { sender, recipient } = await pair();
    const r = await receiver();
    const endpoint = await subscribe(sender, r.url, ['transfer.completed']);
    const rotated = await request(sender, 'POST', `/v1/webhooks/${endpoint.id}/rotate-secret`);
    await pay(sender, recipient);
    const [got] = await r.waitFor(1);
    const signatures = String(got.headers['webhook-signature']).split(' ');
    assert.equal(signatures.length, 2);
    assert.ok(verify(rotated.body.secret, got.headers, got.body), 'the new secret verifies');
    assert.ok(verify(endpoint.secret, got.headers, got.body), 'the previous one still verifies');
    assert.ok(verify(rotated.body.secret, { ...got.headers, 'webhook-signature': signatures[0] }, got.body), 'the new one signs first');
  });

  it('disables an endpoint that answers 410 at once, and says so in an event to the others', async () => {
    const { sender, recipient } = await pair();
    const gone = await receiver(() => ({ status: 410 }));
    const watcher = await receiver();
    const endpoint = await subscribe(sender, gone.url, ['transfer.completed']);
    await subscribe(sender, watcher.url, ['webhook_endpoint.disabled']);
    await pay(sender, recipient);
    const [notice] = await watcher.waitFor(1);
    assert.deepEqual([notice.event.type, notice.event.resource_type, notice.event.resource_id, notice.event.data.status, notice.event.data.reason],
      ['webhook_endpoint.disabled', 'webhook_endpoint', endpoint.id, 'disabled', 'the endpoint answered 410 Gone']);
    assert.ok(notice.event.account_seq > 0, 'in the account\'s sequence');
    await checkWebhookEvent(base(), notice.event);
    const read = await request(sender, 'GET', `/v1/webhooks/${endpoint.id}`);
    assert.deepEqual([read.body.enabled, read.body.disabled_reason], [false, 'the endpoint answered 410 Gone']);
    await pay(sender, recipient);
    const [waiting] = await eventually(async () => {
      const listed = await deliveries(sender, endpoint.id);
      return listed.length === 2 ? listed : undefined;
    }, 10_000, 'the second event recorded');
    await afterNextClaim(sender);
    const [after] = await deliveries(sender, endpoint.id);
    assert.deepEqual([after.id, after.status, after.attempt_count], [waiting.id, 'pending', 0], 'nothing more is sent to it');
    assert.equal(gone.received.length, 1);
    expectError(await request(sender, 'POST', `/v1/webhooks/${endpoint.id}/test`), 409, 'webhook_endpoint_disabled');
  });

  it('disables an endpoint that failed for the configured time (3 days; seconds here), with its event', async () => {
    const { sender, recipient } = await pair();
    const failing = await receiver(() => ({ status: 502 }));
    const endpoint = await subscribe(sender, failing.url, ['transfer.completed']);
    const started = Date.now();
    let read: any;
    while (!read) { // events keep coming and keep failing, each through its own schedule
      await pay(sender, recipient);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const now = await request(sender, 'GET', `/v1/webhooks/${endpoint.id}`);
      if (!now.body.enabled) read = now.body;
      assert.ok(Date.now() - started < 15_000, 'disabled within 15 s');
    }
    assert.ok(Date.now() - started >= 2_500, 'not before the time');
    assert.equal(read.disabled_reason, 'every delivery failed for 3 seconds');
    const events = await testService().runtime.db('account_events').where({ account_id: sender.account.id }).whereRaw(`payload->>'type' = 'webhook_endpoint.disabled'`);
    assert.equal(events.length, 1, 'announced once');
    const enabled = await request(sender, 'PATCH', `/v1/webhooks/${endpoint.id}`, { enabled: true });
    assert.deepEqual([enabled.body.enabled, enabled.body.disabled_reason], [true, null]);
  });

  it('resends one delivery on request, and every failed one since an instant on recovery', async () => {
    const { sender, recipient } = await pair();
    let down = true;
    const r = await receiver(() => (down ? { status: 500 } : { status: 200 }));
    const endpoint = await subscribe(sender, r.url, ['transfer.completed']);
    const since = new Date().toISOString();
    await pay(sender, recipient);
    await pay(sender, recipient);
    const failed = await eventually(async () => {
      const listed = await deliveries(sender, endpoint.id, '?status=failed');
      return listed.length === 2 ? listed : undefined;
    }, 15_000, 'both deliveries to fail');
    down = false;
    const retried = await request(sender, 'POST', `/v1/webhooks/${endpoint.id}/deliveries/${failed[0].id}/retry`);
    assert.equal(retried.status, 202, JSON.stringify(retried.body));
    assert.deepEqual([retried.body.status, retried.body.event.id], ['pending', failed[0].event_id]);
    await r.waitFor(WEBHOOK_TEST_SETTINGS.WEBHOOK_RETRY_SCHEDULE_MS.split(',').length + 2, (g) => g.event.id === failed[0].event_id);
    const recovered = await request(sender, 'POST', `/v1/webhooks/${endpoint.id}/recover`, { since });
    assert.deepEqual([recovered.status, recovered.body.recovered], [202, 1], 'the one still failed');
    await eventually(async () => ((await deliveries(sender, endpoint.id, '?status=delivered')).length === 2 ? true : undefined), 5_000, 'both delivered');
    expectError(await request(sender, 'POST', `/v1/webhooks/${endpoint.id}/recover`, { since: new Date(Date.now() + 60_000).toISOString() }), 400, 'invalid_request', 'since');
    expectError(await request(sender, 'POST', `/v1/webhooks/${endpoint.id}/deliveries/${randomUUID()}/retry`), 404, 'resource_not_found');
    const stranger = await signUp(base());
    expectError(await request(stranger, 'GET', `/v1/webhooks/${endpoint.id}/deliveries`), 403, 'cross_account_access_denied');
  });

  it('sends a signed webhook.test event on request, whatever the filter', async () => {
    const owner = await signUp(base());
    const r = await receiver();
    const endpoint = await subscribe(owner, r.url, ['payment.completed']);
    const sent = await request(owner, 'POST', `/v1/webhooks/${endpoint.id}/test`);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const [got] = await r.waitFor(1);
    assert.ok(verify(endpoint.secret, got.headers, got.body));
    assert.deepEqual([got.event.type, got.event.resource_id, got.event.account_seq, got.event.id], ['webhook.test', endpoint.id, null, sent.body.event_id]);
    await checkWebhookEvent(base(), got.event);
  });

  /**
   * Another account's endpoint, disabled with a day of failed retries waiting, all due and older
   * than anything a test makes afterwards; `run`, then the endpoint and its deliveries go.
   */
  const besideStalledEndpoint = async (run: () => Promise<void>) => {
    const idle = await signUp(base());
    const stalled = await subscribe(idle, 'http://127.0.0.1:9/hooks');
    assert.equal((await request(idle, 'PATCH', `/v1/webhooks/${stalled.id}`, { enabled: false })).status, 200);
    const db = testService().runtime.db;
    const dueSince = Date.now() - 60_000;
    await db('webhook_deliveries').insert(Array.from({ length: 600 }, (_, i) => ({
      id: randomUUID(), endpoint_id: stalled.id, event_id: randomUUID(), event_type: 'balance.updated', account_seq: i + 1, body: '{}',
      status: 'pending', attempts: 4, next_attempt_at: new Date(dueSince + i), last_attempt_at: new Date(dueSince + i), created_at: new Date(dueSince - 86_400_000),
    })));
    try {
      await run();
    } finally {
      await db('webhook_endpoints').where('id', stalled.id).delete();
    }
  };

  it('retries another endpoint\'s failed attempt within seconds while a disabled endpoint has 600 retries due', () => besideStalledEndpoint(async () => {
    const { sender, recipient } = await pair();
    const flaky = await receiver((_, n) => (n === 1 ? { status: 500 } : { status: 200 }));
    await subscribe(sender, flaky.url, ['transfer.completed']);
    await pay(sender, recipient);
    const [first, retried] = await flaky.waitFor(2, () => true, 5_000);
    assert.equal(retried.headers['webhook-id'], first.headers['webhook-id'], 'the same event, retried');
  }));

  it('sends another endpoint\'s manual retry while a disabled endpoint has 600 retries due', () => besideStalledEndpoint(async () => {
    const { sender, recipient } = await pair();
    const r = await receiver();
    const endpoint = await subscribe(sender, r.url, ['transfer.completed']);
    await pay(sender, recipient);
    const [delivered] = await r.waitFor(1, () => true, 5_000);
    const [delivery] = await eventually(async () => {
      const listed = await deliveries(sender, endpoint.id, '?status=delivered');
      return listed.length === 1 ? listed : undefined;
    }, 5_000, 'the delivery recorded');
    assert.equal((await request(sender, 'POST', `/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/retry`)).status, 202);
    await r.waitFor(2, (g) => g.event.id === delivered.event.id, 5_000);
  }));

  it('sends another endpoint\'s test event while a disabled endpoint has 600 retries due', () => besideStalledEndpoint(async () => {
    const owner = await signUp(base());
    const r = await receiver();
    const endpoint = await subscribe(owner, r.url);
    const sent = await request(owner, 'POST', `/v1/webhooks/${endpoint.id}/test`);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const [got] = await r.waitFor(1, () => true, 5_000);
    assert.equal(got.event.id, sent.body.event_id);
  }));

  it('takes due deliveries in turns, one per endpoint, so an endpoint with a backlog does not crowd out the others', async () => {
    const service = testService();
    const index = service.roles.findIndex((role) => role.role === 'webhooks');
    await service.roles[index].stop(); // this test claims in place of the dispatcher
    const db = service.runtime.db;
    const owner = await signUp(base());
    const endpoints = [await subscribe(owner, 'http://127.0.0.1:9/a'), await subscribe(owner, 'http://127.0.0.1:9/b'), await subscribe(owner, 'http://127.0.0.1:9/c')];
    try {
      // The first endpoint has 100 deliveries due for a year, the others one each, due a second later than its first.
      const yearAgo = Date.now() - 365 * 86_400_000;
      const due = (endpointId: string, at: number) => ({
        id: randomUUID(), endpoint_id: endpointId, event_id: randomUUID(), event_type: 'balance.updated', body: '{}', status: 'pending', attempts: 0, next_attempt_at: new Date(at), created_at: new Date(at),
      });
      await db('webhook_deliveries').insert([...Array.from({ length: 100 }, (_, i) => due(endpoints[0].id, yearAgo + i)), due(endpoints[1].id, yearAgo + 1000), due(endpoints[2].id, yearAgo + 1000)]);
      const claimed = await new WebhookDeliveries(db, 60_000).claimDue(3, PER_ENDPOINT, new Map());
      assert.deepEqual(claimed.map((row) => row.endpoint_id).sort(), endpoints.map((e) => e.id).sort(), 'one delivery of each endpoint');
    } finally {
      await db('webhook_endpoints').whereIn('id', endpoints.map((e) => e.id)).delete();
      [service.roles[index]] = await startRoles(service.runtime, ['webhooks']);
    }
  });

  it('records the events that happen while an endpoint is paused, and delivers them once it is enabled again', async () => {
    const { sender, recipient } = await pair();
    const r = await receiver();
    const endpoint = await subscribe(sender, r.url, ['transfer.completed']);
    assert.equal((await request(sender, 'PATCH', `/v1/webhooks/${endpoint.id}`, { enabled: false })).status, 200);
    const paid = [await pay(sender, recipient), await pay(sender, recipient)];
    const waiting = await eventually(async () => {
      const listed = await deliveries(sender, endpoint.id, '?status=pending');
      return listed.length === 2 ? listed : undefined;
    }, 10_000, 'both events recorded, waiting');
    assert.deepEqual(waiting.map((d) => d.attempt_count), [0, 0], 'not attempted while paused');
    await afterNextClaim(sender);
    assert.deepEqual((await deliveries(sender, endpoint.id)).map((d) => d.attempt_count), [0, 0], 'nothing is sent while paused');
    assert.equal(r.received.length, 0);

    const resumed = await request(sender, 'PATCH', `/v1/webhooks/${endpoint.id}`, { enabled: true });
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    const got = await r.waitFor(2, () => true, 5_000);
    assert.deepEqual(new Set(got.map((g) => g.event.data.id)), new Set(paid.map((t) => t.transfer_id)), 'each transfer made while paused');
    for (const g of got) assert.ok(verify(endpoint.secret, g.headers, g.body));
  });

  it('loses nothing when the dispatcher is killed mid-delivery (a process spawned and killed) @system', async () => {
    const service = testService();
    const index = service.roles.findIndex((role) => role.role === 'webhooks');
    await service.roles[index].stop();
    const { sender, recipient } = await pair();
    const r = await receiver((_, n) => (n === 1 ? 'hang' : { status: 200 }));
    const endpoint = await subscribe(sender, r.url, ['transfer.completed']);
    const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'src', 'main.js')], {
      env: { ...process.env, ...WEBHOOK_TEST_SETTINGS, ROLES: 'webhooks' }, stdio: 'ignore',
    });
    try {
      await pay(sender, recipient);
      const [first] = await r.waitFor(1, () => true, 30_000);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      [service.roles[index]] = await startRoles(service.runtime, ['webhooks']);
      const [, again] = await r.waitFor(2, () => true, 20_000);
      assert.equal(again.headers['webhook-id'], first.headers['webhook-id'], 'the same event, sent again once the lease ended');
      const [delivery] = await eventually(async () => {
        const listed = await deliveries(sender, endpoint.id);
        return listed[0]?.status === 'delivered' ? listed : undefined;
      }, 5_000, 'the delivery recorded');
      assert.equal(delivery.attempt_count, 2, 'the lost attempt counted');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      if (!service.roles[index] || service.roles[index].role !== 'webhooks') [service.roles[index]] = await startRoles(service.runtime, ['webhooks']);
    }
  });
});
