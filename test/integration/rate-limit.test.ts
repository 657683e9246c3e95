// Rate limits (SPEC.md sections 7 and 8): a token bucket per credential in Redis. A second
// service instance runs with a small bucket (5 requests, 5 per second) so the limit is reached
// quickly; it shares the stack but has a Redis prefix of its own.
import assert from 'node:assert/strict';
import { testService } from '../hooks';
import { createKey, signUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { startService, type TestService } from '../support/service';

const BURST = 5;
const RATE_PER_SECOND = 5;

describe('rate limits per credential', () => {
  let limited: TestService;
  before(async function () {
    this.timeout(60_000);
    limited = await startService({
      ROLES: 'api', // the main test service already runs the request-log writer
      RATE_LIMIT_RPS: String(RATE_PER_SECOND),
      RATE_LIMIT_BURST: String(BURST),
      REDIS_KEY_PREFIX: `${testService().config.redisKeyPrefix}limited:`,
    });
  });
  after(async function () {
    this.timeout(30_000);
    await limited?.stop();
  });

  const get = (token: string) => call(limited.baseUrl, 'GET', '/v1/customers', undefined, { token });
  const header = (response: JsonResponse, name: string): number => {
    const value = response.headers.get(name);
    assert.ok(value !== null && /^\d+$/.test(value), `${name} is "${value}"`);
    return Number(value);
  };

  it('states the limit on every response and answers the request past the burst with 429 and Retry-After', async () => {
    const owner = await signUp(testService().baseUrl);
    // All at once, so refill between them is far below one token.
    const responses = await Promise.all(Array.from({ length: BURST + 1 }, () => get(owner.key)));
    const passed = responses.filter((r) => r.status === 200);
    const limitedOut = responses.filter((r) => r.status === 429);
    assert.equal(passed.length, BURST, `statuses: ${responses.map((r) => r.status).join(',')}`);
    assert.equal(limitedOut.length, 1);

    for (const response of passed) assert.equal(header(response, 'ratelimit-limit'), BURST);
    assert.deepEqual(passed.map((r) => header(r, 'ratelimit-remaining')).sort(), [0, 1, 2, 3, 4]);

    const rejected = limitedOut[0];
    expectError(rejected, 429, 'rate_limit_exceeded');
    const retryAfterSeconds = header(rejected, 'retry-after');
    assert.ok(retryAfterSeconds >= 1, `Retry-After is ${retryAfterSeconds}`);
    assert.equal(header(rejected, 'ratelimit-remaining'), 0);
    assert.ok(header(rejected, 'ratelimit-reset') >= 1);
  });

  it('limits each credential on its own and lets requests through again after Retry-After', async () => {
    const owner = await signUp(testService().baseUrl);
    const other = await createKey(testService().baseUrl, owner.token, 'secret');
    let rejected: JsonResponse | undefined;
    for (let i = 0; i < BURST * 4 && !rejected; i++) {
      const response = await get(owner.key);
      if (response.status === 429) rejected = response;
      else assert.equal(response.status, 200);
    }
    assert.ok(rejected, 'the limit was reached');
    const limitedAtMs = Date.now();
    const retryAfterMs = header(rejected, 'retry-after') * 1000;

    const otherKey = await get(other.key);
    assert.equal(otherKey.status, 200, 'another key of the same account is not limited');
    assert.equal(header(otherKey, 'ratelimit-remaining'), BURST - 1);

    const passedAgain = await eventually(async () => {
      const response = await get(owner.key);
      return response.status === 200 ? response : undefined;
    }, retryAfterMs + 2_000, 'a request to pass after Retry-After');
    assert.ok(Date.now() - limitedAtMs <= retryAfterMs + 2_000);
    assert.equal(passedAgain.status, 200);
  });

  it('limits requests without a credential by client address', async () => {
    const responses = await Promise.all(Array.from({ length: BURST + 1 }, () => call(limited.baseUrl, 'GET', '/v1/customers')));
    const statuses = responses.map((r) => r.status).sort();
    assert.deepEqual(statuses, [...Array(BURST).fill(401), 429], 'unauthenticated guessing is limited too');
  });
});
