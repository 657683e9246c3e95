// Degraded dependencies (issue: reliability): with Redis, Postgres or Kafka away, each route answers
// within a bounded time, with the error body where it needs the missing one (503
// service_unavailable naming it, Retry-After); /readyz names what is missing; when it returns,
// the service recovers without a restart. The dependency is taken away from one service by a
// TCP proxy in front of the real server, so the rest of the suite keeps its stack. For Kafka the
// proxy sits on the port the broker's fault listener advertises (scripts/stack.env), so metadata
// sends every connection of that service through it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startService, startServiceBehindProxies, type ServiceBehindProxies, type TestService } from '../support/service';
import { signUp, uniqueEmail, type SignedUp } from '../support/accounts';
import { balances, fund, transfer } from '../support/money';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';

const ANSWER_MS_MAX = 8_000;
/** The Kafka part's send deadline: a POST without Kafka answers 503 once it passed. */
const SEND_DEADLINE_MS = 1_000;

/** /readyz answers 503, with the missing dependency's check failed and the other one passed. */
async function expectNotReady(baseUrl: string, missing: string, present: string): Promise<void> {
  const ready = await timed(call(baseUrl, 'GET', '/readyz'));
  assert.equal(ready.status, 503);
  assert.equal(ready.body.checks[missing].ok, false);
  assert.equal(ready.body.checks[present].ok, true);
}

async function timed(request: Promise<JsonResponse>): Promise<JsonResponse> {
  const started = Date.now();
  const response = await request;
  assert.ok(Date.now() - started < ANSWER_MS_MAX, `answered within ${ANSWER_MS_MAX} ms (took ${Date.now() - started} ms)`);
  return response;
}

describe('degraded dependencies', function () {
  this.timeout(120_000);
  let proxied: ServiceBehindProxies;
  let owner: SignedUp;
  const base = () => proxied.service.baseUrl;

  before(async () => {
    // The API alone: the suite's own service runs the ledger these commands reach.
    proxied = await startServiceBehindProxies({ ROLES: 'api', READINESS_CACHE_MS: '0' });
    owner = await signUp(base());
  });
  after(() => proxied?.stop());

  const readiness = () => call(base(), 'GET', '/readyz');

  it('keeps serving without Redis (limiter open, idempotency and keys from Postgres), says so on /readyz, and recovers', async () => {
    await proxied.redis.cut();
    const listed = await timed(call(base(), 'GET', '/v1/customers', undefined, { token: owner.key }));
    assert.equal(listed.status, 200);
    const idempotencyKey = randomUUID();
    const body = { email: uniqueEmail('no-redis'), business_name: 'Offline Cache Ltd', country_code: 'FR' };
    const created = await timed(call(base(), 'POST', '/v1/customers', body, { token: owner.key, idempotencyKey }));
    assert.equal(created.status, 201);
    const replayed = await timed(call(base(), 'POST', '/v1/customers', body, { token: owner.key, idempotencyKey }));
    assert.deepEqual([replayed.status, replayed.body.id], [200, created.body.id], 'Postgres still holds the key');
    await expectNotReady(base(), 'redis', 'postgres');

    await proxied.redis.restore();
    await eventually(async () => ((await readiness()).status === 200 ? true : undefined), 20_000, 'ready again after Redis returned');
  });

  it('answers 503 naming Postgres while it is away, says so on /readyz, and recovers without a restart', async () => {
    await proxied.postgres.cut();
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
    await expectNotReady(base(), 'postgres', 'redis');

    await proxied.postgres.restore();
    const back = await eventually(async () => {
      const response = await call(base(), 'GET', '/v1/customers', undefined, { token: owner.key });
      return response.status === 200 ? response : undefined;
    }, 20_000, 'Postgres reads again');
    assert.equal(back.status, 200);
    assert.equal((await readiness()).status, 200);
  });
});

describe('degraded dependencies: Kafka', function () {
  this.timeout(180_000);
  let kafka: TcpProxy;
  let service: TestService;
  let sender: SignedUp;
  let recipient: SignedUp;
  const base = () => service.baseUrl;
  const readiness = () => call(base(), 'GET', '/readyz');

  before(async () => {
    const listener = process.env.KAFKA_FAULT_LISTENER;
    const proxyPort = Number(process.env.KAFKA_FAULT_PROXY_PORT);
    assert.ok(listener && proxyPort, 'scripts/stack.sh exports KAFKA_FAULT_LISTENER and KAFKA_FAULT_PROXY_PORT');
    const [host, port] = listener.split(':');
    kafka = await TcpProxy.start(host, Number(port), proxyPort);
    // The API alone, bootstrapped through the proxy; the suite's own service runs the ledger.
    // A send deadline of a second, not five: the test waits it out twice.
    service = await startService({
      KAFKA_BROKERS: `127.0.0.1:${proxyPort}`, ROLES: 'api', LOG_LEVEL: 'fatal', READINESS_CACHE_MS: '0', LEDGER_COMMAND_SEND_DEADLINE_MS: String(SEND_DEADLINE_MS),
    }).catch((error) => {
      throw new Error(`the API did not start through Kafka's fault listener (${listener}); a broker started before the ` +
        `listener existed lacks it: restart it with 'npm run stack:down && npm run stack:up'. ${error}`);
    });
    sender = await signUp(base());
    recipient = await signUp(base());
    await fund(base(), sender.key, 'USD', '50.00');
  });
  after(async () => {
    await kafka?.restore();
    await service?.stop();
    await kafka?.stop();
  });

  it('answers a money-moving POST 503 naming Kafka, keeps reads working, says so on /readyz, and completes the repeat once Kafka returns', async () => {
    await kafka.cut();
    const idempotencyKey = randomUUID();
    const body = { amount: '12.50', currency: 'USD', recipient_email: recipient.account.email };
    const refused = await timed(transfer(base(), sender.key, body, idempotencyKey));
    expectError(refused, 503, 'service_unavailable', 'kafka', 'POST /v1/transfers without Kafka');
    assert.equal(refused.headers.get('retry-after'), '2');
    assert.match(refused.body.message, /outcome is unknown until you repeat the request with the same Idempotency-Key/, 'its command is in the batch Kafka has not acknowledged');
    const faucetKey = randomUUID();
    const faucet = await timed(call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '1.00' }, { token: sender.key, idempotencyKey: faucetKey }));
    expectError(faucet, 503, 'service_unavailable', 'kafka', 'POST /v1/sandbox/faucet without Kafka');
    assert.match(faucet.body.message, /the command was not sent/, 'its command queued behind that batch, and was dropped');

    const listed = await timed(call(base(), 'GET', '/v1/transfers', undefined, { token: sender.key }));
    assert.equal(listed.status, 200, 'reads come from Postgres');
    assert.equal(listed.body.data.length, 0, 'the transfer is not created while Kafka is away');
    await expectNotReady(base(), 'kafka', 'postgres');

    await kafka.restore();
    // SPEC.md section 7: the client repeats the 503 with the same key, and the transfer happens once.
    const completed = await eventually(async () => {
      const response = await transfer(base(), sender.key, body, idempotencyKey);
      return response.status === 201 || response.status === 200 ? response : undefined;
    }, 60_000, 'the repeated transfer completes after Kafka returned');
    assert.equal(completed.body.status, 'completed');
    const again = await transfer(base(), sender.key, body, idempotencyKey);
    assert.deepEqual([again.status, again.body.transfer_id], [200, completed.body.transfer_id]);
    // The faucet's repeat sends its command now, and the account holds the credit once.
    const credited = await eventually(async () => {
      const response = await call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '1.00' }, { token: sender.key, idempotencyKey: faucetKey });
      return response.status === 201 || response.status === 200 ? response : undefined;
    }, 60_000, 'the repeated faucet request is decided');
    const replayed = await call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '1.00' }, { token: sender.key, idempotencyKey: faucetKey });
    assert.deepEqual([replayed.status, replayed.body.id], [200, credited.body.id]);
    assert.equal((await balances(base(), sender.token)).USD.available, '38.50', '50.00 funded + 1.00 credited once - 12.50 sent once');
    await eventually(async () => ((await readiness()).status === 200 ? true : undefined), 30_000, 'ready again after Kafka returned');
  });
});
