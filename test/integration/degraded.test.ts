// Degraded dependencies (issue: reliability): with Redis or Postgres away, each route answers
// within a bounded time, with the error body where it needs the missing one (503
// service_unavailable naming it, Retry-After); /readyz names what is missing; when it returns,
// the service recovers without a restart. The dependency is taken away from one service by a
// TCP proxy in front of the real server, so the rest of the suite keeps its stack.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startService, type TestService } from '../support/service';
import { signUp, uniqueEmail, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';

const ANSWER_MS_MAX = 8_000;

async function timed(request: Promise<JsonResponse>): Promise<JsonResponse> {
  const started = Date.now();
  const response = await request;
  assert.ok(Date.now() - started < ANSWER_MS_MAX, `answered within ${ANSWER_MS_MAX} ms (took ${Date.now() - started} ms)`);
  return response;
}

describe('degraded dependencies', function () {
  this.timeout(120_000);
  let postgres: TcpProxy;
  let redis: TcpProxy;
  let service: TestService;
  let owner: SignedUp;
  const base = () => service.baseUrl;

  before(async () => {
    const database = new URL(process.env.DATABASE_URL!);
    const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    postgres = await TcpProxy.start(database.hostname, Number(database.port || 5432));
    redis = await TcpProxy.start(redisUrl.hostname, Number(redisUrl.port || 6379));
    database.port = String(postgres.port);
    redisUrl.port = String(redis.port);
    // The API alone: the suite's own service runs the ledger these commands reach.
    service = await startService({ DATABASE_URL: database.toString(), REDIS_URL: redisUrl.toString(), ROLES: 'api' });
    owner = await signUp(base());
  });
  after(async () => {
    await postgres.restore();
    await redis.restore();
    await service?.stop();
    await postgres.stop();
    await redis.stop();
  });

  const readiness = () => call(base(), 'GET', '/readyz');

  it('keeps serving without Redis (limiter open, idempotency and keys from Postgres), says so on /readyz, and recovers', async () => {
    await redis.cut();
    const listed = await timed(call(base(), 'GET', '/v1/customers', undefined, { token: owner.key }));
    assert.equal(listed.status, 200);
    const idempotencyKey = randomUUID();
    const body = { email: uniqueEmail('no-redis'), business_name: 'Offline Cache Ltd', country_code: 'FR' };
    const created = await timed(call(base(), 'POST', '/v1/customers', body, { token: owner.key, idempotencyKey }));
    assert.equal(created.status, 201);
    const replayed = await timed(call(base(), 'POST', '/v1/customers', body, { token: owner.key, idempotencyKey }));
    assert.deepEqual([replayed.status, replayed.body.id], [200, created.body.id], 'Postgres still holds the key');
    const ready = await timed(readiness());
    assert.equal(ready.status, 503);
    assert.equal(ready.body.checks.redis.ok, false);
    assert.equal(ready.body.checks.postgres.ok, true);

    await redis.restore();
    await eventually(async () => ((await readiness()).status === 200 ? true : undefined), 20_000, 'ready again after Redis returned');
  });

  it('answers 503 naming Postgres while it is away, says so on /readyz, and recovers without a restart', async () => {
    await postgres.cut();
    for (const [method, path, payload] of [
      ['GET', '/v1/customers', undefined],
      ['POST', '/v1/customers', { email: uniqueEmail('no-pg'), business_name: 'Down Ltd', country_code: 'DE' }],
      ['GET', '/v1/transactions', undefined],
      ['POST', '/v1/auth/sessions', { email: owner.account.email, password: 'whatever it is' }],
    ] as const) {
      const response = await timed(call(base(), method, path, payload, { token: owner.key, idempotencyKey: randomUUID() }));
      expectError(response, 503, 'service_unavailable', 'postgres', `${method} ${path}`);
      assert.equal(response.headers.get('retry-after'), '2');
    }
    const ready = await timed(readiness());
    assert.equal(ready.status, 503);
    assert.equal(ready.body.checks.postgres.ok, false);
    assert.equal(ready.body.checks.redis.ok, true);

    await postgres.restore();
    const back = await eventually(async () => {
      const response = await call(base(), 'GET', '/v1/customers', undefined, { token: owner.key });
      return response.status === 200 ? response : undefined;
    }, 20_000, 'Postgres reads again');
    assert.equal(back.status, 200);
    assert.equal((await readiness()).status, 200);
  });
});
