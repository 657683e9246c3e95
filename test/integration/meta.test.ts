// Health, readiness and the OpenAPI document of the running service.
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { apiRoutes } from '../../src/roles';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { checkResponse } from '../support/contract';
import { call } from '../support/http';


describe('service health and description', () => {
  it('GET /healthz answers while the process is up', async () => {
    const response = await call(testService().baseUrl, 'GET', '/healthz');
    assert.equal(response.status, 200);
    assert.equal(response.body.status, 'ok');
  });

  it("GET /readyz reports Postgres, Redis, Kafka, the schema registry and the process's Kafka threads", async () => {
    const response = await call(testService().baseUrl, 'GET', '/readyz');
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.ready, true);
    assert.deepEqual(Object.keys(response.body.checks).sort(), ['kafka', 'postgres', 'redis', 'schema_registry', 'thread:outbox', 'thread:request-logs', 'warm']);
    for (const check of Object.values<any>(response.body.checks)) assert.equal(check.ok, true);
  });

  it('GET /v1/openapi.json is a valid OpenAPI 3.1 document listing every registered route', async () => {
    const response = await call<any>(testService().baseUrl, 'GET', '/v1/openapi.json');
    assert.equal(response.status, 200);
    const document: any = response.body;
    assert.equal(document.openapi, '3.1.0');

    const result = await new Validator().validate(structuredClone(document));
    assert.ok(result.valid, String(JSON.stringify(result.errors)).slice(0, 2000));
    const broken = structuredClone(document);
    delete broken.info;
    assert.equal((await new Validator().validate(broken)).valid, false, 'the validator rejects a document without info');

    const routes = apiRoutes(testService().runtime);
    assert.ok(routes.length >= 3);
    for (const route of routes) {
      const operation: any = document.paths[route.path]?.[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.path} is missing from the document`);
      assert.equal(operation.operationId, route.operationId);
    }
  });

  it('the contract check every test call goes through fails on an undeclared status or field', async () => {
    const base = testService().baseUrl;
    await checkResponse(base, 'GET', '/healthz', 200, 'application/json', { status: 'ok' });
    await assert.rejects(checkResponse(base, 'GET', '/healthz', 200, 'application/json', { status: 'ok', extra: 1 }), /does not match the declared schema/);
    await assert.rejects(checkResponse(base, 'GET', '/healthz', 418, 'application/json', {}), /declares no 418/);
    await assert.rejects(checkResponse(base, 'GET', '/v1/accounts/me/balance', 200, 'application/json', { totals: [{ currency: 'USD' }], breakdown: [] }), /must have required property/);
  });

  it('answers 405 with Allow for a path of another route, even where a route with a parameter could match it', async () => {
    const base = testService().baseUrl;
    const owner = await signUp(base);
    // GET /v1/payments/{id} takes a uuid: /v1/payments/add-funds is POST's alone.
    for (const path of ['/v1/payments/add-funds', '/v1/payments/send']) {
      const response = await fetch(`${base}${path}`, { method: 'GET', headers: { authorization: `Bearer ${owner.key}` } });
      assert.equal(response.status, 405, path);
      assert.equal(response.headers.get('allow'), 'POST', path);
    }
    const options = await fetch(`${base}/v1/payments/add-funds`, { method: 'OPTIONS' });
    assert.deepEqual([options.status, options.headers.get('allow')], [405, 'POST']);
    const badId = await fetch(`${base}/v1/payments/not-a-uuid`, { headers: { authorization: `Bearer ${owner.key}` } });
    assert.equal(badId.status, 400, 'a malformed id of the one route the path fits is a bad request');
  });
});
