// payctl's writes against a decision not made yet (SPEC.md section 7): a 202 with Retry-After is
// asked again under the same Idempotency-Key until the answer is decided, and what is printed and
// returned is that decided answer. Served by a local HTTP server that answers the way the API does.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { printedCall } from '../../src/cli/calls';

/** A server that answers the first `lateAnswers` POSTs 202 pending, then 201; it records each POST's Idempotency-Key. */
async function ledgerLateBy(lateAnswers: number): Promise<{ url: string; keys: string[]; close(): Promise<void> }> {
  const keys: string[] = [];
  const server = http.createServer((request, response) => {
    keys.push(String(request.headers['idempotency-key']));
    const late = keys.length <= lateAnswers;
    response.writeHead(late ? 202 : 201, { 'content-type': 'application/json', ...(late ? { 'retry-after': '1' } : {}) });
    response.end(JSON.stringify(late ? { id: 'h1', status: 'pending' } : { id: 'h1', status: 'captured' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keys, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Runs `work` with payctl pointed at `url` and its printing kept from the test's output. */
async function quietly<T>(url: string, work: () => Promise<T>): Promise<T> {
  const saved = { key: process.env.PAYCTL_API_KEY, base: process.env.PAYCTL_BASE_URL, out: process.stdout.write, err: process.stderr.write };
  process.env.PAYCTL_API_KEY = 'sk_test_unit';
  process.env.PAYCTL_BASE_URL = url;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  process.stderr.write = (() => true) as typeof process.stderr.write;
  try {
    return await work();
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    if (saved.key === undefined) delete process.env.PAYCTL_API_KEY; else process.env.PAYCTL_API_KEY = saved.key;
    if (saved.base === undefined) delete process.env.PAYCTL_BASE_URL; else process.env.PAYCTL_BASE_URL = saved.base;
  }
}

describe('payctl and a decision not made yet', function () {
  this.timeout(10_000);

  it('asks again under the same Idempotency-Key after Retry-After, and answers the decided body', async () => {
    const server = await ledgerLateBy(2);
    try {
      const body = await quietly(server.url, () => printedCall('POST', '/v1/holds/h1/capture', { profile: 'unit-test-none', body: { amount: '1.00' } }));
      assert.deepEqual(body, { id: 'h1', status: 'captured' });
      assert.equal(server.keys.length, 3, 'two 202s, then the decision');
      assert.equal(new Set(server.keys).size, 1, 'one Idempotency-Key for every repeat');
    } finally {
      await server.close();
    }
  });

  it('answers at once when the first answer is decided', async () => {
    const server = await ledgerLateBy(0);
    try {
      const body = await quietly(server.url, () => printedCall('POST', '/v1/holds/h1/capture', { profile: 'unit-test-none', body: {} }));
      assert.deepEqual([body, server.keys.length], [{ id: 'h1', status: 'captured' }, 1]);
    } finally {
      await server.close();
    }
  });
});
