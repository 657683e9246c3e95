// The cross-cutting HTTP contract (SPEC.md section 2 error body, DESIGN.md section 5), on a Koa
// app built from declarations alone: no stack is needed to show it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp, openGuards } from '../../src/http/app';
import { DomainError } from '../../src/domain-error';
import type { RouteDef } from '../../src/http/route';
import { call } from '../support/http';

const echo: RouteDef = {
  method: 'POST', path: '/v1/echo', operationId: 'echo', summary: 'echo', tag: 'test',
  auth: { kind: 'public' },
  body: {
    type: 'object', additionalProperties: false, required: ['amount', 'country_code'],
    properties: {
      amount: { type: 'string' },
      country_code: { type: 'string', pattern: '^[A-Z]{2}$', 'x-error': 'invalid_country_code' },
      nested: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string' } } },
    },
  },
  response: { status: 201, description: 'echoed' },
  handler: async ({ body }) => ({ status: 201, body }),
};
const boom: RouteDef = {
  method: 'GET', path: '/v1/boom/{id}', operationId: 'boom', summary: 'boom', tag: 'test',
  auth: { kind: 'public' },
  params: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } } },
  response: { status: 200, description: 'never' },
  handler: async () => { throw new Error('secret database password leaked in stack'); },
};
const domainFailure: RouteDef = {
  method: 'GET', path: '/v1/declined', operationId: 'declined', summary: 'declined', tag: 'test',
  auth: { kind: 'public' },
  query: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 200 } }, additionalProperties: false },
  response: { status: 200, description: 'never' },
  handler: async ({ query }) => {
    if (query.limit === 7) throw new DomainError('insufficient_funds', 'balance below the amount', 'amount');
    return { status: 200, body: { limit: query.limit } };
  },
};

describe('HTTP contract of every route', () => {
  let server: Server;
  let base: string;
  before(async () => {
    const app = createApp({ routes: [echo, boom, domainFailure], guards: openGuards, bodyLimitBytes: 1024 });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const expectError = (response: { status: number; body: any; headers: Headers }, status: number, code: string, details?: string | null) => {
    assert.equal(response.status, status);
    assert.equal(response.body.success, false);
    assert.equal(response.body.error, code);
    assert.equal(typeof response.body.message, 'string');
    assert.ok(response.body.message.length > 0);
    if (details !== undefined) assert.equal(response.body.details, details);
    assert.match(response.headers.get('request-id') ?? '', /^[0-9a-f-]{36}$/);
  };

  it('answers a valid request and tags it with a Request-Id', async () => {
    const response = await call(base, 'POST', '/v1/echo', { amount: '1.00', country_code: 'GB' });
    assert.equal(response.status, 201);
    assert.deepEqual(response.body, { amount: '1.00', country_code: 'GB' });
    assert.match(response.headers.get('request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  it('gives every response its own Request-Id', async () => {
    const [a, b] = await Promise.all([call(base, 'GET', '/v1/declined'), call(base, 'GET', '/v1/declined')]);
    assert.notEqual(a.headers.get('request-id'), b.headers.get('request-id'));
  });

  it('rejects, in order of precedence, each kind of bad request with the error body', async () => {
    const table: Array<[string, () => Promise<any>, number, string, string | null]> = [
      ['unknown route', () => call(base, 'GET', '/v1/nothing-here'), 404, 'resource_not_found', '/v1/nothing-here'],
      ['wrong method', () => call(base, 'DELETE', '/v1/echo'), 405, 'method_not_allowed', 'DELETE'],
      ['missing Content-Type', () => call(base, 'POST', '/v1/echo', undefined, { raw: '{"amount":"1.00","country_code":"GB"}' }), 400, 'invalid_request', 'Content-Type'],
      ['wrong Content-Type', () => call(base, 'POST', '/v1/echo', undefined, { raw: 'amount=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 400, 'invalid_request', 'Content-Type'],
      ['malformed JSON', () => call(base, 'POST', '/v1/echo', undefined, { raw: '{"amount":', headers: { 'content-type': 'application/json' } }), 400, 'invalid_request', 'body'],
      ['oversized body', () => call(base, 'POST', '/v1/echo', { amount: 'x'.repeat(2000), country_code: 'GB' }), 400, 'invalid_request', 'body'],
      ['missing field', () => call(base, 'POST', '/v1/echo', { country_code: 'GB' }), 400, 'invalid_request', 'amount'],
      ['amount as a JSON number', () => call(base, 'POST', '/v1/echo', { amount: 10.5, country_code: 'GB' }), 400, 'invalid_request', 'amount'],
      ['unknown field', () => call(base, 'POST', '/v1/echo', { amount: '1', country_code: 'GB', colour: 'red' }), 400, 'invalid_request', 'colour'],
      ['missing nested field', () => call(base, 'POST', '/v1/echo', { amount: '1', country_code: 'GB', nested: {} }), 400, 'invalid_request', 'nested.name'],
      ['field with its own code', () => call(base, 'POST', '/v1/echo', { amount: '1', country_code: 'gbr' }), 400, 'invalid_country_code', 'country_code'],
      ['bad path parameter', () => call(base, 'GET', '/v1/boom/not-a-uuid'), 400, 'invalid_request', 'id'],
      ['bad query parameter', () => call(base, 'GET', '/v1/declined?limit=500'), 400, 'invalid_request', 'limit'],
      ['domain decision', () => call(base, 'GET', '/v1/declined?limit=7'), 422, 'insufficient_funds', 'amount'],
    ];
    for (const [name, send, status, code, details] of table) {
      const response = await send();
      assert.equal(response.status, status, `${name}: status ${response.status} ${JSON.stringify(response.body)}`);
      expectError(response, status, code, details);
    }
  });

  it('names the allowed methods on a 405', async () => {
    const response = await call(base, 'GET', '/v1/echo');
    expectError(response, 405, 'method_not_allowed');
    assert.equal(response.headers.get('allow'), 'POST');
    const other = await call(base, 'PUT', '/v1/boom/7d2f43c4-2b43-4c1e-9f55-0b8f8c7c8f11');
    expectError(other, 405, 'method_not_allowed');
    assert.equal(other.headers.get('allow'), 'GET');
  });

  it('lists in Allow only the routes whose parameters the path fits: a path no route takes is 404', async () => {
    // GET /v1/boom/{id} takes a uuid: /v1/boom/not-a-uuid names no route, with any method.
    expectError(await call(base, 'PUT', '/v1/boom/not-a-uuid'), 404, 'resource_not_found');
  });

  it('hides the internals of an unexpected failure behind an opaque 500', async () => {
    const response = await call(base, 'GET', '/v1/boom/7d2f43c4-2b43-4c1e-9f55-0b8f8c7c8f11');
    expectError(response, 500, 'internal_error');
    assert.doesNotMatch(JSON.stringify(response.body), /password|stack|Error:/);
    assert.equal(response.body.details, response.headers.get('request-id'));
  });
});

describe('Server-Timing: where a request spent its time in the API process', () => {
  let server: Server;
  let base: string;
  /** Long enough that no other stage takes half of it, on a machine as busy as a test run makes it. */
  const HANDLER_SLEEP_MS = 400;
  const slow: RouteDef = {
    method: 'POST', path: '/v1/slow', operationId: 'slow', summary: 'slow', tag: 'test',
    auth: { kind: 'public' }, idempotent: true,
    body: { type: 'object', properties: {} },
    response: { status: 201, description: 'done' },
    handler: async () => { await new Promise((resolve) => setTimeout(resolve, HANDLER_SLEEP_MS)); return { status: 201, body: { done: true } }; },
  };
  // An idempotency guard in memory: the first request with a key executes, the next replays.
  const answered = new Map<string, { status: number; body: unknown }>();
  before(async () => {
    const app = createApp({
      routes: [slow, echo],
      guards: {
        ...openGuards,
        idempotent: async (request, _route, execute) => {
          const stored = answered.get(request.idempotencyKey!);
          if (stored) return stored;
          const result = await execute(randomUUID());
          answered.set(request.idempotencyKey!, result);
          return result;
        },
      },
      bodyLimitBytes: 1024,
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const stagesOf = (header: string | null) => [...(header ?? '').matchAll(/(\w+);dur=([\d.]+)/g)].map(([, stage, ms]) => ({ stage, ms: Number(ms) }));

  it('names each step of an idempotent request in order, the handler with its own time', async () => {
    const response = await fetch(`${base}/v1/slow`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'timing-1' }, body: '{}' });
    assert.equal(response.status, 201);
    const stages = stagesOf(response.headers.get('server-timing'));
    assert.deepEqual(stages.map((s) => s.stage), ['auth', 'validate', 'claim', 'handler', 'record']);
    const handler = stages.find((s) => s.stage === 'handler')!;
    assert.ok(handler.ms >= HANDLER_SLEEP_MS - 1, `the handler slept ${HANDLER_SLEEP_MS} ms, and took ${handler.ms}`);
    // Half the sleep: a stage charged with the handler's sleep takes all of it, however busy the machine.
    assert.ok(stages.filter((s) => s.stage !== 'handler').every((s) => s.ms < HANDLER_SLEEP_MS / 2), JSON.stringify(stages));
  });

  it('says replay when the handler did not run, and has no claim for a route without an Idempotency-Key', async () => {
    const replayed = await fetch(`${base}/v1/slow`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'timing-1' }, body: '{}' });
    assert.deepEqual(stagesOf(replayed.headers.get('server-timing')).map((s) => s.stage), ['auth', 'validate', 'replay']);
    const plain = await fetch(`${base}/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: '1', country_code: 'GB' }) });
    assert.deepEqual(stagesOf(plain.headers.get('server-timing')).map((s) => s.stage), ['auth', 'validate', 'handler']);
  });
});
