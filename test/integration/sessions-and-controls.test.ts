// Issue 38, item 6: sessions signed out server-side and bound to their issuer and audience;
// Sandbox-Scenario refused by the live environment; /readyz cheap however often it is called.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { SESSION_AUDIENCE, SESSION_ISSUER } from '../../src/auth/credentials';
import { createApp, openGuards } from '../../src/http/app';
import type { RouteDef } from '../../src/http/route';
import { testService } from '../hooks';
import { signUp, TEST_PASSWORD } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';

describe('sessions, sandbox controls and readiness (issue 38)', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  const vibans = (token: string) => call(base(), 'GET', '/v1/accounts/me/vibans', undefined, { token });

  it('signs a session out on the server: its token is refused from then on, other sessions stay', async () => {
    const owner = await signUp(base());
    const other = await call(base(), 'POST', '/v1/auth/sessions', { email: owner.email, password: TEST_PASSWORD });
    assert.equal(other.status, 201);
    assert.equal((await vibans(owner.token)).status, 200);

    const signedOut = await call(base(), 'DELETE', '/v1/auth/sessions/current', undefined, { token: owner.token });
    assert.equal(signedOut.status, 200, JSON.stringify(signedOut.body));
    assert.equal(signedOut.body.signed_out, true);
    assert.equal(signedOut.body.session_expires_at, new Date(decodeJwt(owner.token).exp! * 1000).toISOString());

    expectError(await vibans(owner.token), 401, 'invalid_token');
    expectError(await call(base(), 'DELETE', '/v1/auth/sessions/current', undefined, { token: owner.token }), 401, 'invalid_token');
    assert.equal((await vibans(other.body.token)).status, 200, 'another session of the account is not signed out');
    // An API key is not a session: it is revoked, not signed out.
    expectError(await call(base(), 'DELETE', '/v1/auth/sessions/current', undefined, { token: owner.key }), 403, 'dashboard_access_denied');
    expectError(await call(base(), 'DELETE', '/v1/auth/sessions/current', undefined, { token: testService().config.masterKey }), 403, 'insufficient_scope');
    const document = (await call(base(), 'GET', '/v1/openapi.json')).body;
    assert.deepEqual(document.paths['/v1/auth/sessions/current'].delete.security, [{ sessionToken: [] }]);
  });

  it('keeps a sign-out when Redis loses its marker (a flush): the token stays refused, from Postgres', async () => {
    const owner = await signUp(base());
    assert.equal((await call(base(), 'DELETE', '/v1/auth/sessions/current', undefined, { token: owner.token })).status, 200);
    const marker = `auth:session:revoked:${decodeJwt(owner.token).jti}`;
    const { redis } = testService().runtime;
    assert.equal(await redis.exists(marker), 1, 'the sign-out is cached');
    await redis.del(marker);
    expectError(await vibans(owner.token), 401, 'invalid_token');
    assert.equal(await redis.exists(marker), 1, 'and cached again');
  });

  it('issues session tokens naming their issuer, audience and an id of their own', async () => {
    const owner = await signUp(base());
    const claims = decodeJwt(owner.token);
    assert.equal(claims.iss, SESSION_ISSUER);
    assert.equal(claims.aud, SESSION_AUDIENCE);
    assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
  });

  it('declares sandbox_scenario_not_allowed on the routes that take Sandbox-Scenario', async () => {
    const document = (await call(base(), 'GET', '/v1/openapi.json')).body;
    for (const path of ['/v1/payments/add-funds', '/v1/payments/send', '/v1/transfers']) {
      assert.match(document.paths[path].post.responses['400'].description, /sandbox_scenario_not_allowed/, path);
    }
  });

  it('refuses Sandbox-Scenario in the live environment (400 sandbox_scenario_not_allowed) and takes it in the sandbox', async () => {
    const route: RouteDef = {
      method: 'POST', path: '/v1/scenario-probe', operationId: 'probe', summary: 'probe', tag: 'test', auth: { kind: 'public' }, sandboxScenario: true,
      response: { status: 200, description: 'the scenario', schema: { type: 'object' } },
      handler: async ({ sandboxScenario }) => ({ status: 200, body: { scenario: sandboxScenario } }),
    };
    for (const environment of ['live', 'sandbox'] as const) {
      const server = createApp({ routes: [route], guards: openGuards, bodyLimitBytes: 1024, environment }).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/scenario-probe`;
        const response = await fetch(url, { method: 'POST', headers: { 'sandbox-scenario': 'decline', 'idempotency-key': randomUUID() } });
        const body = await response.json() as Record<string, unknown>;
        if (environment === 'live') {
          assert.equal(response.status, 400, JSON.stringify(body));
          assert.deepEqual([body.error, body.details], ['sandbox_scenario_not_allowed', 'Sandbox-Scenario']);
        } else {
          assert.equal(response.status, 200, JSON.stringify(body));
        }
        const without = await fetch(url, { method: 'POST' });
        assert.equal(without.status, 200, 'without the header the live route works');
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });

  it('answers /readyz from its last checks: many calls at once run the dependency checks at most once', async () => {
    const { db } = testService().runtime;
    let checks = 0;
    const spy = (query: { sql: string }) => { if (query.sql === 'SELECT 1') checks += 1; };
    db.on('query', spy);
    try {
      const answers = await Promise.all(Array.from({ length: 25 }, () => call(base(), 'GET', '/readyz')));
      for (const answer of answers) assert.equal(answer.status, 200);
    } finally {
      db.off('query', spy);
    }
    assert.ok(checks <= 1, `${checks} Postgres checks for 25 calls`);
  });
});
