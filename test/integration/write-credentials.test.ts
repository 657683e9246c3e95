// Every write operation of /v1/openapi.json, with every kind of credential (SPEC.md section 5): a
// publishable key's write is 403 publishable_key_write_denied whatever the route (a dashboard
// route refuses every API key first), a restricted key needs the route's scope, and the master
// key alone may call an operator route. The operations are read from the served document, so a
// route added later is covered by itself.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { createKey, signUp } from '../support/accounts';
import { call } from '../support/http';

type Kind = 'publishable' | 'restricted without the scope' | 'restricted with the scope' | 'secret' | 'session' | 'master';
type Rule = 'dashboard' | 'admin' | 'key' | 'session';

interface WriteOperation { method: string; path: string; rule: Rule; scope: string | null }

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
function expected(kind: Kind, { rule, scope }: WriteOperation): string | null {
  const apiKey = kind === 'publishable' || kind.startsWith('restricted') || kind === 'secret';
  if ((rule === 'dashboard' || rule === 'session') && apiKey) return 'dashboard_access_denied';
  if (rule === 'session') return kind === 'session' ? null : 'insufficient_scope';
  if (kind === 'publishable') return 'publishable_key_write_denied';
  if (rule === 'admin') return kind === 'master' ? null : 'insufficient_scope';
  if (kind === 'restricted without the scope' && scope !== null) return 'insufficient_scope';
  return null;
}

describe('credentials on every write route (SPEC.md section 5)', () => {
  const base = () => testService().baseUrl;

  it('answers each kind of credential on each write operation of the document as the rule says', async () => {
    const document = (await call(base(), 'GET', '/v1/openapi.json')).body;
    const operations: WriteOperation[] = [];
    for (const [path, item] of Object.entries<Record<string, { security?: Array<Record<string, string[]>> }>>(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!['post', 'patch', 'delete', 'put'].includes(method)) continue;
        const rule = ruleOf(operation.security ?? []);
        if (rule) operations.push({ method: method.toUpperCase(), path, ...rule });
      }
    }
    assert.ok(operations.length >= 20, `the document lists the write routes (${operations.length} found)`);
    assert.ok(operations.some((o) => o.path === '/v1/webhooks' && o.method === 'POST'), 'the webhook routes among them');

    const owner = await signUp(base());
    const publishable = await createKey(base(), owner.token, 'publishable');
    const unrelated = await createKey(base(), owner.token, 'restricted', ['transactions:read']);
    const credentials = async (kind: Kind, scope: string | null, operationPath: string): Promise<string> => {
      switch (kind) {
        case 'publishable': return publishable.key;
        case 'restricted without the scope': return unrelated.key;
        case 'restricted with the scope': return (await createKey(base(), owner.token, 'restricted', scope ? [scope] : ['transactions:read'])).key;
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
      for (const kind of kinds) {
        if (kind === 'restricted with the scope' && operation.rule !== 'key') continue;
        const token = await credentials(kind, operation.scope, operation.path);
        const answer = await call(base(), operation.method, path, operation.method === 'DELETE' ? undefined : {}, { token, idempotencyKey: randomUUID() });
        const want = expected(kind, operation);
        const got = answer.status === 403 || answer.status === 401 ? answer.body?.error : null;
        const refusedForCredential = got !== null && CREDENTIAL_REFUSALS.has(got);
        if (want === null ? refusedForCredential : !(answer.status === 403 && got === want)) {
          wrong.push(`${operation.method} ${operation.path} with a ${kind} credential: ${answer.status} ${got ?? ''}, expected ${want ?? 'admitted'}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });
});
