// What a webhook attempt may reach and what its delivery log says of a failure
// (src/webhooks/post.ts): where private addresses are refused (always in live), an endpoint
// whose name resolves to one, or whose IP literal is one in any form the URL parser writes, is
// refused at connection time; and a failed attempt says only connection_failed, timeout or
// http_<status>, never an address, a port or an errno of the network the service runs in.
import assert from 'node:assert/strict';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { eventually } from '../support/http';
import { deliveries, receiversClosedAfterEach, request, subscribe } from '../support/webhooks';
import { postWebhook } from '../../src/webhooks/post';

describe('webhook connections', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  const receiver = receiversClosedAfterEach();

  it('where private addresses are refused, refuses at connection time a name resolving to one and every literal form, with a generic error', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    // What the URL parser rewrites to 127.0.0.1 or to ::ffff:7f00:1: Node connects to a literal without a lookup.
    const forms = ['localhost', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '2130706433', '0x7f.1', '017700000001', '127.1'];
    for (const host of forms) {
      const result = await postWebhook({ url: `http://${host}:${port}/hooks`, headers: {}, body: '{}', timeoutMs: 2_000, publicOnly: true });
      assert.deepEqual([result.status, result.error], [null, 'connection_failed'], host);
      assert.ok(result.detail, 'the operator\'s log says why');
    }
    assert.equal(r.received.length, 0, 'nothing was sent');
    const sandbox = await postWebhook({ url: r.url.replace('127.0.0.1', 'localhost'), headers: {}, body: '{}', timeoutMs: 2_000, publicOnly: false });
    assert.equal(sandbox.status, 200, 'the sandbox connects');
  });

  it('says why an attempt failed without detail of the network: connection_failed, timeout, http_<status>', async () => {
    const closed = await postWebhook({ url: 'http://127.0.0.1:9/hooks', headers: {}, body: '{}', timeoutMs: 2_000, publicOnly: false });
    assert.deepEqual([closed.status, closed.error], [null, 'connection_failed']);
    assert.match(closed.detail ?? '', /ECONNREFUSED/, 'the detail stays in the operator\'s log');
    const hanging = await receiver(() => 'hang');
    const late = await postWebhook({ url: hanging.url, headers: {}, body: '{}', timeoutMs: 300, publicOnly: false });
    assert.deepEqual([late.status, late.error], [null, 'timeout']);
    const failing = await receiver(() => ({ status: 503, body: 'later' }));
    const refused = await postWebhook({ url: failing.url, headers: {}, body: '{}', timeoutMs: 2_000, publicOnly: false });
    assert.deepEqual([refused.status, refused.error], [503, 'http_503']);

    // In the delivery log too, also for an attempt recorded with the old detailed text.
    const owner = await signUp(base());
    const endpoint = await subscribe(owner, 'http://127.0.0.1:9/hooks');
    const sent = await request(owner, 'POST', `/v1/webhooks/${endpoint.id}/test`);
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const [delivery] = await eventually(async () => {
      const listed = await deliveries(owner, endpoint.id);
      return listed.length === 1 && listed[0].attempts.length > 0 ? listed : undefined;
    }, 15_000, 'an attempt');
    assert.equal(delivery.attempts[0].error, 'connection_failed');
    const { db } = testService().runtime;
    await db('webhook_delivery_attempts').where({ delivery_id: delivery.id }).update({ error: 'ECONNREFUSED: connect ECONNREFUSED 10.0.0.7:5432' });
    const [again] = await deliveries(owner, endpoint.id);
    assert.ok(again.attempts.every((a: { error: string }) => a.error === 'connection_failed'), JSON.stringify(again.attempts));
  });
});
