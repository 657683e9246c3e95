// The permission rules of SPEC.md section 5 for an identified caller, in order of precedence,
// on route declarations alone. account_not_active is shown here because no money-moving route
// exists yet.
import assert from 'node:assert/strict';
import { authorize, type AuthenticatedPrincipal } from '../../src/auth/authenticate';
import { DomainError } from '../../src/domain-error';
import type { AuthRule } from '../../src/auth/rules';
import type { HttpMethod, RouteDef } from '../../src/http/route';

function route(method: HttpMethod, auth: AuthRule): RouteDef {
  return {
    method, path: '/v1/test', operationId: 'test', summary: 'test', tag: 'test', auth,
    response: { status: 200, description: 'ok' },
    handler: async () => ({ status: 200, body: null }),
  };
}

function principal(kind: AuthenticatedPrincipal['kind'], overrides: Partial<AuthenticatedPrincipal> = {}): AuthenticatedPrincipal {
  const isMaster = kind === 'master';
  return {
    kind, accountId: isMaster ? null : 'a6f0c1d2-0000-4000-8000-000000000001', credentialId: `${kind}-1`,
    scopes: [], isAdmin: isMaster, kybStatus: isMaster ? null : 'active', ...overrides,
  };
}

const sendMoney = route('POST', { kind: 'key', scope: 'transfers:write', moneyMoving: true });
const readTransfers = route('GET', { kind: 'key', scope: 'transfers:read' });
const readQuote = route('GET', { kind: 'key', scope: 'fx:read', publishable: 'reads' });
const dashboardRead = route('GET', { kind: 'dashboard' });
const dashboardWrite = route('POST', { kind: 'dashboard' });
const adminWrite = route('PATCH', { kind: 'admin' });
const manageWebhooks = route('POST', { kind: 'key', scope: 'webhooks:write' });
const readWebhooks = route('GET', { kind: 'key', scope: 'webhooks:read' });

describe('authorize(): may this caller call this route (SPEC.md section 5)', () => {
  it('rejects, in order of precedence, each caller a route does not admit', () => {
    const table: Array<[string, AuthenticatedPrincipal, RouteDef, string]> = [
      ['a secret key on an admin route', principal('secret'), adminWrite, 'insufficient_scope'],
      ['a session on an admin route', principal('session'), adminWrite, 'insufficient_scope'],
      ['a secret key on a dashboard route', principal('secret'), dashboardRead, 'dashboard_access_denied'],
      ['a publishable key on a dashboard write (dashboard rule first)', principal('publishable'), dashboardWrite, 'dashboard_access_denied'],
      ['a restricted key on a dashboard route', principal('restricted', { scopes: ['transfers:read'] }), dashboardRead, 'dashboard_access_denied'],
      ['a publishable key on a write', principal('publishable'), sendMoney, 'publishable_key_write_denied'],
      ['a publishable key on a write of a resource it may not even read (webhooks)', principal('publishable'), manageWebhooks, 'publishable_key_write_denied'],
      ['a publishable key on an admin write', principal('publishable'), adminWrite, 'publishable_key_write_denied'],
      ['a publishable key reading a resource it may not read (webhooks)', principal('publishable'), readWebhooks, 'insufficient_scope'],
      ['a publishable key reading what a page may not show (a route that does not say it may)', principal('publishable'), readTransfers, 'insufficient_scope'],
      ['a publishable key writing where it may read', principal('publishable'), route('POST', { kind: 'key', scope: 'fx:read', publishable: 'reads' }), 'publishable_key_write_denied'],
      ['a restricted key without the scope', principal('restricted', { scopes: ['transfers:read'] }), sendMoney, 'insufficient_scope'],
      ['a restricted key without the read scope', principal('restricted', { scopes: ['transfers:write'] }), readTransfers, 'insufficient_scope'],
      ['a secret key of a pending account moving money', principal('secret', { kybStatus: 'pending' }), sendMoney, 'account_not_active'],
      ['a session of a suspended account moving money', principal('session', { kybStatus: 'suspended' }), sendMoney, 'account_not_active'],
      ['a scoped restricted key of a pending account moving money', principal('restricted', { scopes: ['transfers:write'], kybStatus: 'pending' }), sendMoney, 'account_not_active'],
    ];
    for (const [what, caller, target, code] of table) {
      assert.throws(() => authorize(caller, target), (error: unknown) => {
        assert.ok(error instanceof DomainError, what);
        assert.equal(error.code, code, what);
        return true;
      }, what);
    }
  });

  it('admits each caller a route allows', () => {
    const table: Array<[string, AuthenticatedPrincipal, RouteDef]> = [
      ['a secret key of an active account moving money', principal('secret'), sendMoney],
      ['a scoped restricted key of an active account moving money', principal('restricted', { scopes: ['transfers:write'] }), sendMoney],
      ['a session of an active account moving money', principal('session'), sendMoney],
      ['the master key moving money (no account of its own)', principal('master'), sendMoney],
      ['a pending account reading (only money movement needs KYB)', principal('secret', { kybStatus: 'pending' }), readTransfers],
      ['a publishable key reading what a page may show', principal('publishable'), readQuote],
      ['a scoped restricted key reading', principal('restricted', { scopes: ['transfers:read'] }), readTransfers],
      ['a session on a dashboard route', principal('session'), dashboardRead],
      ['the master key on a dashboard route', principal('master'), dashboardWrite],
      ['the master key on an admin route', principal('master'), adminWrite],
    ];
    for (const [what, caller, target] of table) assert.doesNotThrow(() => authorize(caller, target), what);
  });

  it('names the missing scope in details', () => {
    assert.throws(() => authorize(principal('restricted', { scopes: [] }), sendMoney), { code: 'insufficient_scope', details: 'transfers:write', status: 403 });
  });
});
