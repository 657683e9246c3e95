// What the webhook tests share: receivers that close after each test, and the account's webhook
// routes called as its owner against the shared test service.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import type { SignedUp } from './accounts';
import { call } from './http';
import { startReceiver, type Receiver } from './webhook-receiver';

/** Starts receivers for the tests of the calling `describe`, each closed after the test that started it. */
export function receiversClosedAfterEach(): (answer?: Receiver['answer']) => Promise<Receiver> {
  const receivers: Receiver[] = [];
  afterEach(async () => { for (const r of receivers.splice(0)) await r.close(); });
  return async (answer) => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };
}

/** `method` `pathname` as `owner`, with an Idempotency-Key of its own. */
export const request = (owner: SignedUp, method: string, pathname: string, body?: unknown) =>
  call(testService().baseUrl, method, pathname, body, { token: owner.key, idempotencyKey: randomUUID() });

/** Registers `url` for `owner`'s events (all of them when `events` is empty). */
export async function subscribe(owner: SignedUp, url: string, events: string[] = []): Promise<{ id: string; secret: string }> {
  const created = await request(owner, 'POST', '/v1/webhooks', { url, events });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body as { id: string; secret: string };
}

/** The deliveries of `owner`'s endpoint `endpointId`, newest first (`query` as "?status=…"). */
export async function deliveries(owner: SignedUp, endpointId: string, query = ''): Promise<any[]> {
  const listed = await request(owner, 'GET', `/v1/webhooks/${endpointId}/deliveries${query}`);
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  return listed.body.data as any[];
}
