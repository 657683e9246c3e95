// Every operation of /v1/openapi.json, writes and reads, with every kind of credential (SPEC.md
// section 5): a publishable key's write is 403 publishable_key_write_denied whatever the route (a
// dashboard route refuses every API key first), and it reads only the operations that say a page
// may show their answer (x-publishable-key: reads); a restricted key needs the route's scope, and
// the master key alone may call an operator route. The operations are read from the served
// document, so a route added later is covered by itself: a new read refuses pk_ keys unless it
// says otherwise, and every API-key route names its scope.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { createKey, signUp } from '../support/accounts';
import { call } from '../support/http';

type Kind = 'publishable' | 'restricted without the scope' | 'restricted with the scope' | 'secret' | 'session' | 'master';
type Rule = 'dashboard' | 'admin' | 'key' | 'session';

interface WriteOperation { method: string; path: string; rule: Rule; scope: string | null; publishable: boolean }

/** The only reads a publishable key may make: what a page may show (README, "Keys"). */
const PUBLISHABLE_READS = ['GET /v1/accounts/me', 'GET /v1/fx/quotes/{id}'];
/**
 * The only API-key routes that need no scope: any credential of the account reads its own account,
 * and the sandbox test clock it lives on (a part of the account, as its time).
 */
const UNSCOPED = ['GET /v1/accounts/me', 'GET /v1/sandbox/test-clocks/{id}'];

/** The codes by which a credential is refused for what it is; any other answer is the route's own. */
const CREDENTIAL_REFUSALS = new Set(['authentication_required', 'invalid_api_key', 'publishable_key_write_denied', 'insufficient_scope', 'dashboard_access_denied']);

/** The credential rule an operation declares, read from its security requirements. */
function ruleOf(security: Array<Record<string, string[]>>): { rule: Rule; scope: string | null } | null {
  const schemes = security.flatMap((requirement) => Object.keys(requirement));
  if (schemes.length === 0) return null; // public: no credential
  const apiKey = security.find((requirement) => requirement.apiKey)?.apiKey;
  if (apiKey) return { rule: 'key', scope: apiKey[0] ?? null };
  if (schemes.length === 1 && schemes[0] === 'sessionToken') return { rule: 'session', scope: null };
  return { rule: schemes.includes('sessionToken') ? 'dashboard' : 'admin', scope: null };
}

/** What the rule of SPEC.md section 5 answers `kind` on `operation`: a refusal's code, or null (admitted). */
function expected(kind: Kind, { method, rule, scope, publishable }: WriteOperation): string | null {
  const apiKey = kind === 'publishable' || kind.startsWith('restricted') || kind === 'secret';
  if ((rule === 'dashboard' || rule === 'session') && apiKey) return 'dashboard_access_denied';
  if (rule === 'session') return kind === 'session' ? null : 'insufficient_scope';
  if (kind === 'publishable' && method !== 'GET') return 'publishable_key_write_denied';
  if (rule === 'admin') return kind === 'master' ? null : 'insufficient_scope';
  if (kind === 'publishable' && !publishable) return 'insufficient_scope';
  if (kind === 'restricted without the scope' && scope !== null) return 'insufficient_scope';
  return null;
}

describe('credentials on every route (SPEC.md section 5)', () => {
  const base = () => testService().baseUrl;

  /** The operations of the served document with the given methods that take a credential. */
  async function operationsOf(methods: string[]): Promise<WriteOperation[]> {
    const document = (await call(base(), 'GET', '/v1/openapi.json')).body;
    const operations: WriteOperation[] = [];
    for (const [path, item] of Object.entries<Record<string, { security?: Array<Record<string, string[]>>; 'x-publishable-key'?: string }>>(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!methods.includes(method)) continue;
        const rule = ruleOf(operation.security ?? []);
        if (rule) operations.push({ method: method.toUpperCase(), path, ...rule, publishable: operation['x-publishable-key'] === 'reads' });
      }
    }
    return operations;
  }

  /**
   * A read's status, and its error body when it is refused: only that matters here, so the
   * answer is not waited for (the event stream of GET /v1/notifications never ends).
   */
  async function read(path: string, token: string): Promise<{ status: number; body: any }> {
    const aborted = new AbortController();
    const response = await fetch(`${base()}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: aborted.signal });
    if (response.status !== 401 && response.status !== 403) {
      aborted.abort();
      return { status: response.status, body: null };
    }
    return { status: response.status, body: await response.json() };
  }

  /** Each kind of credential on each operation; the answers that differ from the rule. */
  async function walk(operations: WriteOperation[], unrelatedScope: string): Promise<string[]> {
    assert.ok(!operations.some((o) => o.scope === unrelatedScope), `no operation walked needs ${unrelatedScope}`);
    const owner = await signUp(base());
    const publishable = await createKey(base(), owner.token, 'publishable');
    const unrelated = await createKey(base(), owner.token, 'restricted', [unrelatedScope]);
    const scoped = new Map<string, string>();
    const credentials = async (kind: Kind, scope: string | null, operationPath: string): Promise<string> => {
      switch (kind) {
        case 'publishable': return publishable.key;
        case 'restricted without the scope': return unrelated.key;
        case 'restricted with the scope': {
          const name = scope ?? unrelatedScope;
          if (!scoped.has(name)) scoped.set(name, (await createKey(base(), owner.token, 'restricted', [name])).key);
          return scoped.get(name)!;
        }
        case 'secret': return owner.key;
        // Signing out ends the session it is called with: that operation gets a session of its own.
        case 'session': return operationPath === '/v1/auth/sessions/current' ? (await call(base(), 'POST', '/v1/auth/sessions', { email: owner.email, password: owner.password })).body.token : owner.token;
        case 'master': return testService().config.masterKey;
      }
    };
    const kinds: Kind[] = ['publishable', 'restricted without the scope', 'restricted with the scope', 'secret', 'session', 'master'];
    const wrong: string[] = [];
    for (const operation of operations) {
      // Ids that name nothing: whatever the route answers past its credential check, nothing is changed.
      const path = operation.path.replace(/\{[^}]+\}/g, () => randomUUID());
      const write = operation.method !== 'GET';
      for (const kind of kinds) {
        if (kind === 'restricted with the scope' && operation.rule !== 'key') continue;
        const token = await credentials(kind, operation.scope, operation.path);
        const answer = write
          ? await call(base(), operation.method, path, operation.method === 'DELETE' ? undefined : {}, { token, idempotencyKey: randomUUID() })
          : await read(path, token);
        const want = expected(kind, operation);
        const got = answer.status === 403 || answer.status === 401 ? answer.body?.error : null;
        const refusedForCredential = got !== null && CREDENTIAL_REFUSALS.has(got);
        if (want === null ? refusedForCredential : !(answer.status === 403 && got === want)) {
          wrong.push(`${operation.method} ${operation.path} with a ${kind} credential: ${answer.status} ${got ?? ''}, expected ${want ?? 'admitted'}`);
        }
      }
    }
    return wrong;
  }

  it('answers each kind of credential on each write operation of the document as the rule says', async () => {
    const operations = await operationsOf(['post', 'patch', 'delete', 'put']);
    assert.ok(operations.length >= 20, `the document lists the write routes (${operations.length} found)`);
    assert.ok(operations.some((o) => o.path === '/v1/webhooks' && o.method === 'POST'), 'the webhook routes among them');
    assert.deepEqual(operations.filter((o) => o.publishable).map((o) => `${o.method} ${o.path}`), [], 'no write admits a publishable key');
    assert.deepEqual(await walk(operations, 'transactions:read'), []);
  });

  it('answers each kind of credential on each read operation of the document as the rule says: pk_ keys only what a page may show', async () => {
    const operations = await operationsOf(['get']);
    assert.ok(operations.length >= 30, `the document lists the read routes (${operations.length} found)`);
    const named = (o: WriteOperation) => `${o.method} ${o.path}`;
    assert.deepEqual(operations.filter((o) => o.publishable).map(named).sort(), [...PUBLISHABLE_READS].sort(), 'the reads a publishable key may make, and no other');
    assert.deepEqual(operations.filter((o) => o.rule === 'key' && o.scope === null).map(named), UNSCOPED, 'every other API-key route names its scope');
    for (const read of ['/v1/request-logs', '/v1/request-logs/{id}', '/v1/contacts', '/v1/contacts/{id}', '/v1/payments', '/v1/payments/{id}', '/v1/customers', '/v1/events']) {
      const operation = operations.find((o) => o.path === read);
      assert.ok(operation && operation.rule === 'key' && !operation.publishable && operation.scope !== null, `${read}: a scope, and no publishable key`);
    }
    assert.equal(operations.find((o) => o.path === '/v1/events')?.scope, 'events:read');
    assert.deepEqual(await walk(operations, 'transfers:write'), []);
  });
});
