// The process's Kafka threads are supervised (issue: reliability): a request-log shipper or an
// outbox publisher that dies is restarted, gets again what it had not acknowledged, and /readyz
// reports it; before, logs were dropped and every POST answered 202 until the process restarted.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { supervisedThreads, type WatchedThread } from '../../src/kafka/supervised-thread';
import { testService } from '../hooks';
import { createCustomer, signUp } from '../support/accounts';
import { call, eventually } from '../support/http';

const thread = (role: string): WatchedThread => {
  const found = supervisedThreads().find((t) => t.role === role);
  assert.ok(found, `a supervised ${role} thread runs`);
  return found;
};

async function readyAgain(role: string): Promise<void> {
  await eventually(async () => {
    const response = await call(testService().baseUrl, 'GET', '/readyz');
    return response.status === 200 && response.body.checks[`thread:${role}`]?.ok === true ? true : undefined;
  }, 15_000, `the ${role} thread ready again`);
}

describe('Kafka thread supervision', () => {
  const base = () => testService().baseUrl;

  it('restarts a dead request-log shipper; logs recorded meanwhile are still stored', async () => {
    const owner = await signUp(base());
    const shipper = thread('request-logs');
    const restartsBefore = shipper.health().restarts;
    await shipper.crash();
    assert.equal(shipper.health().ok, false, 'the dead thread is reported down');
    const during = await createCustomer(base(), owner.key); // recorded while the shipper is down
    await readyAgain('request-logs');
    assert.equal(shipper.health().restarts, restartsBefore + 1);
    const { masterKey } = testService().runtime.config;
    await eventually(async () => {
      const response = await call(base(), 'GET', `/v1/request-logs/${during.headers.get('request-id')}`, undefined, { token: masterKey });
      return response.status === 200 ? true : undefined;
    }, 15_000, 'the log recorded while the shipper was down');
  });

  it('restarts a dead outbox publisher; POSTs get their decisions again, not 202', async () => {
    const owner = await signUp(base());
    const publisher = thread('outbox');
    await publisher.crash();
    const funded = await call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '5.00' }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(funded.status, 201, `the decision arrived: ${funded.status} ${JSON.stringify(funded.body)}`);
    await readyAgain('outbox');
    const again = await call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '1.00' }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(again.status, 201);
  });
});
