// NotificationHub: in-process fan-out of domain events to open streams by account, with a
// bounded queue per subscriber and deduplication by event id (SPEC.md section 6: events may be
// delivered more than once).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { DomainError } from '../../src/domain-error';
import { acceptsEventFor } from '../../consumers/notifier/runner';
import { ACCOUNT_ID_HEADER } from '../../src/kafka/topics';
import { HUB_LIMITS_DEFAULT, NotificationHub, RecentIds, type HubLimits, type Subscription } from '../../src/notifications/hub';

function event(accountId: string, id: string = randomUUID()): DomainEventEnvelope {
  const resourceId = randomUUID();
  return {
    id, type: 'transfer.pending', created_at: new Date().toISOString(), environment: 'sandbox',
    resource_type: 'transfer', resource_id: resourceId, account_id: accountId, account_seq: 0,
    data: { id: resourceId, status: 'pending', amount: '1.00', currency: 'EUR', attributes: null },
  };
}

/** Everything queued for `subscription` right now (its next() calls that resolve at once). */
async function drain(subscription: Subscription): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const pending = subscription.next();
    const next = await Promise.race([pending, new Promise<'idle'>((resolve) => setImmediate(() => resolve('idle')))]);
    if (next === 'idle' || next === null) return ids;
    ids.push(next.id);
  }
}

const limits = (overrides: Partial<HubLimits>): HubLimits => ({ ...HUB_LIMITS_DEFAULT, ...overrides });

describe('NotificationHub', () => {
  const alice = randomUUID();
  const bob = randomUUID();

  it('delivers an account\'s events to each of its subscribers, in order', async () => {
    const hub = new NotificationHub();
    const first = hub.subscribe(alice);
    const second = hub.subscribe(alice);
    const events = [event(alice), event(alice), event(alice)];
    for (const e of events) assert.equal(hub.publish(e), 2);
    assert.deepEqual(await drain(first), events.map((e) => e.id));
    assert.deepEqual(await drain(second), events.map((e) => e.id));
  });

  it('wakes a subscriber waiting for its next event', async () => {
    const hub = new NotificationHub();
    const subscription = hub.subscribe(alice);
    const waiting = subscription.next();
    const e = event(alice);
    hub.publish(e);
    assert.equal((await waiting)?.id, e.id);
  });

  it('keeps accounts apart: no subscriber sees another account\'s events', async () => {
    const hub = new NotificationHub();
    const ofAlice = hub.subscribe(alice);
    const ofBob = hub.subscribe(bob);
    const forAlice = event(alice);
    const forBob = event(bob);
    hub.publish(forAlice);
    hub.publish(forBob);
    assert.equal(hub.publish(event(randomUUID())), 0, 'an account with no stream here: offered to nobody');
    assert.deepEqual(await drain(ofAlice), [forAlice.id]);
    assert.deepEqual(await drain(ofBob), [forBob.id]);
  });

  it('delivers an event id once per subscriber, however often it is published', async () => {
    const hub = new NotificationHub();
    const subscription = hub.subscribe(alice);
    const e = event(alice);
    const other = event(alice);
    hub.publish(e);
    hub.publish(e); // queued twice, delivered once
    hub.publish(other);
    assert.deepEqual(await drain(subscription), [e.id, other.id]);
    hub.publish(e); // after delivery: dropped at once
    assert.equal(subscription.queueLength, 0);
    assert.deepEqual(await drain(subscription), []);
  });

  it('drops the live copy of an event the replay already delivered', async () => {
    const hub = new NotificationHub();
    const subscription = hub.subscribe(alice);
    const replayed = event(alice);
    hub.publish(replayed); // buffered while the replay runs
    assert.equal(subscription.remember(replayed.id), true, 'the replay writes it');
    assert.equal(subscription.remember(replayed.id), false, 'and only once');
    assert.deepEqual(await drain(subscription), []);
  });

  it('remembers a bounded number of ids, forgetting the oldest first', () => {
    const recent = new RecentIds(3);
    for (const id of ['a', 'b', 'c', 'd']) assert.equal(recent.add(id), true);
    assert.equal(recent.size, 3);
    assert.equal(recent.has('a'), false, 'the oldest is forgotten');
    assert.equal(recent.add('b'), false);
    assert.equal(recent.add('a'), true);
  });

  it('closes a subscriber that falls behind at the queue bound, and only that one', async () => {
    const hub = new NotificationHub(limits({ queueLengthMax: 3 }));
    const slow = hub.subscribe(alice);
    const keepingUp = hub.subscribe(alice);
    const events = [event(alice), event(alice), event(alice)];
    for (const e of events) {
      hub.publish(e);
      assert.equal((await keepingUp.next())?.id, e.id);
    }
    assert.equal(slow.queueLength, 3, 'at the bound: still open');
    assert.equal(slow.closeReason, null);
    const overflow = event(alice);
    hub.publish(overflow);
    assert.equal(slow.closeReason, 'queue_full', 'one more closes it');
    assert.equal(slow.queueLength, 0, 'its queue is dropped: the client replays it from Postgres');
    assert.equal(await slow.next(), null);
    assert.equal(keepingUp.closeReason, null);
    assert.equal((await keepingUp.next())?.id, overflow.id);
    assert.equal(hub.subscriberCount(alice), 1);
  });

  it('hands over everything queued at once, in order, without events delivered before', async () => {
    const hub = new NotificationHub();
    const subscription = hub.subscribe(alice);
    const [first, second, third] = [event(alice), event(alice), event(alice)];
    assert.equal(subscription.remember(second.id), true, 'second was delivered by the replay');
    for (const e of [first, second, third, first]) hub.publish(e);
    assert.equal((await subscription.next())?.id, first.id);
    assert.deepEqual(subscription.takeQueued().map((e) => e.id), [third.id], 'the replayed one and the repeat are dropped');
    assert.deepEqual(subscription.takeQueued(), [], 'nothing left');
    assert.equal(subscription.queueLength, 0);
  });

  it('with the default limits, closes at 1,000 queued events', () => {
    const hub = new NotificationHub();
    const slow = hub.subscribe(alice);
    for (let i = 0; i < 1_000; i++) hub.publish(event(alice));
    assert.equal(slow.closeReason, null);
    hub.publish(event(alice));
    assert.equal(slow.closeReason, 'queue_full');
  });

  it('forgets a subscription once it is closed, and a waiting reader gets null', async () => {
    const hub = new NotificationHub();
    const subscription = hub.subscribe(alice);
    hub.subscribe(bob);
    assert.equal(hub.subscriberCount(), 2);
    const waiting = subscription.next();
    subscription.close('unsubscribed');
    subscription.close('unsubscribed'); // idempotent
    assert.equal(await waiting, null);
    assert.equal(hub.subscriberCount(alice), 0);
    assert.equal(hub.subscriberCount(), 1);
    assert.equal(hub.publish(event(alice)), 0);
  });

  it('closes every subscription on shutdown', () => {
    const hub = new NotificationHub();
    const subscriptions = [hub.subscribe(alice), hub.subscribe(alice), hub.subscribe(bob)];
    hub.closeAll();
    assert.deepEqual(subscriptions.map((s) => s.closeReason), ['hub_closed', 'hub_closed', 'hub_closed']);
    assert.equal(hub.subscriberCount(), 0);
  });

  it('bounds the open streams per account, then per process', () => {
    const hub = new NotificationHub(limits({ subscribersPerAccountMax: 2, subscribersMax: 3 }));
    hub.subscribe(alice);
    const second = hub.subscribe(alice);
    assert.throws(() => hub.subscribe(alice), (error: unknown) => error instanceof DomainError && error.code === 'rate_limit_exceeded');
    hub.subscribe(bob);
    assert.throws(() => hub.subscribe(randomUUID()), (error: unknown) => error instanceof DomainError && error.code === 'service_unavailable');
    second.close('unsubscribed');
    hub.subscribe(alice); // a closed stream frees its place
    assert.equal(hub.subscriberCount(), 3);
  });
});

describe('the notifier\'s header test (consumers/notifier/runner.ts)', () => {
  it('decodes only the events of accounts with an open stream here, and every event without the header', () => {
    const hub = new NotificationHub();
    const watched = randomUUID();
    const accepts = acceptsEventFor(hub);
    const subscription = hub.subscribe(watched);
    assert.equal(accepts({ [ACCOUNT_ID_HEADER]: Buffer.from(watched) }), true, 'an account with a stream here');
    assert.equal(accepts({ [ACCOUNT_ID_HEADER]: Buffer.from(randomUUID()) }), false, 'an account without one is skipped unread');
    assert.equal(accepts({}), true, 'an event without the header (an operator event, or one sent before the header existed)');
    assert.equal(accepts(undefined), true);
    subscription.close('unsubscribed');
    assert.equal(accepts({ [ACCOUNT_ID_HEADER]: Buffer.from(watched) }), false, 'once its last stream closed');
  });
});
