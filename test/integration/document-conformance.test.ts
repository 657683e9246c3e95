// The OpenAPI document is as strict as the validation: a client that builds each request from the
// document alone (its enums, examples, formats, bounds, and the shapes an object may take) is not
// refused for a bad request. One request per operation, with a credential the operation accepts;
// ids name nothing, so a 404 is a fair answer, a 400 is not.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { firstValid, type Schema } from '../support/fuzz/values';

interface Parameter { name: string; in: string; required?: boolean; schema: Schema }

describe('the OpenAPI document describes requests as strictly as the validation', function () {
  this.timeout(120_000);
  const base = () => testService().baseUrl;

  it('refuses no request built from the document alone as a bad request', async () => {
    const document = await (await fetch(`${base()}/v1/openapi.json`)).json() as { paths: Record<string, Record<string, any>> };
    const owner = await signUp(base());
    const credentialFor = (security: Array<Record<string, string[]>> | undefined): string | null => {
      const schemes = (security ?? []).flatMap((requirement) => Object.keys(requirement));
      if (schemes.length === 0) return null;
      if (schemes.includes('apiKey')) return owner.key;
      if (schemes.includes('sessionToken')) return owner.token;
      return testService().config.masterKey;
    };
    const refused: string[] = [];
    let sent = 0;
    for (const [template, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const parameters: Parameter[] = operation.parameters ?? [];
        const where = `${method.toUpperCase()} ${template}`;
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(firstValid(parameters.find((p) => p.in === 'path' && p.name === name)?.schema ?? {}, `${where} ${name}`))));
        const query = new URLSearchParams();
        for (const parameter of parameters.filter((p) => p.in === 'query' && p.required)) query.set(parameter.name, String(firstValid(parameter.schema, `${where} ?${parameter.name}`)));
        const headers: Record<string, string> = {};
        const token = credentialFor(operation.security);
        if (token) headers.authorization = `Bearer ${token}`;
        if (parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')) headers['idempotency-key'] = randomUUID();
        const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
        if (bodySchema) headers['content-type'] = 'application/json';
        const aborter = new AbortController();
        const response = await fetch(`${base()}${path}${query.size > 0 ? `?${query}` : ''}`, {
          method: method.toUpperCase(), headers, signal: aborter.signal, body: bodySchema ? JSON.stringify(firstValid(bodySchema, `${where} body`)) : undefined,
        });
        sent++;
        // An event stream answers at once and stays open: its status is the answer.
        const text = response.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await response.text();
        aborter.abort();
        if (response.status === 400) refused.push(`${where}: 400 ${text.slice(0, 300)}`);
      }
    }
    assert.ok(sent >= 60, `every operation of the document (${sent} sent)`);
    assert.deepEqual(refused, []);
  });
});
