// GET /v1/events: the account's events read back as a list, newest first, paged by the event
// sequence number, filtered by type; another account's events are never in it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { fund } from '../support/money';

describe('GET /v1/events', () => {
  const base = () => testService().baseUrl;

  it('lists the account\'s events newest first, a page at a time, of one type on request, and no one else\'s', async () => {
    const owner = await signUp(base());
    const friend = await signUp(base());
    await fund(base(), owner.key, 'USD', '50.00');
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient_email: friend.email, amount: '5.00', currency: 'USD' }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const all = await eventually(async () => {
      const page = await call(base(), 'GET', '/v1/events?limit=100', undefined, { token: owner.token });
      return page.body.data.some((e: { type: string }) => e.type === 'transfer.completed') ? page.body : undefined;
    }, 10_000, 'the transfer\'s events are listed');
    const seqs = all.data.map((e: { account_seq: number }) => e.account_seq);
    assert.deepEqual(seqs, [...seqs].sort((a, b) => b - a), 'newest first');
    assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => seqs.length - i), 'every event of the account, once');
    assert.ok(all.data.every((e: { account_id: string }) => e.account_id === owner.account.id));

    const first = await call(base(), 'GET', '/v1/events?limit=2', undefined, { token: owner.key });
    assert.deepEqual([first.body.data.length, first.body.has_more, first.body.next_cursor], [2, true, String(seqs[1])]);
    const second = await call(base(), 'GET', `/v1/events?limit=2&before=${first.body.next_cursor}`, undefined, { token: owner.key });
    assert.deepEqual(second.body.data.map((e: { account_seq: number }) => e.account_seq), seqs.slice(2, 4));

    const completed = await call(base(), 'GET', '/v1/events?type=transfer.completed', undefined, { token: owner.token });
    assert.deepEqual(completed.body.data.map((e: { type: string; resource_id: string }) => [e.type, e.resource_id]), [['transfer.completed', sent.body.transfer_id]]);
    const friends = await call(base(), 'GET', '/v1/events?limit=100', undefined, { token: friend.token });
    assert.ok(!friends.body.data.some((e: { id: string }) => all.data.some((o: { id: string }) => o.id === e.id)), 'the friend sees only its own events');

    expectError(await call(base(), 'GET', '/v1/events?before=abc', undefined, { token: owner.key }), 400, 'invalid_request', 'before');
    expectError(await call(base(), 'GET', '/v1/events?limit=101', undefined, { token: owner.key }), 400, 'invalid_request', 'limit');
    expectError(await call(base(), 'GET', `/v1/events?account_id=${friend.account.id}`, undefined, { token: owner.key }), 403, 'cross_account_access_denied', 'account_id');
  });
});
