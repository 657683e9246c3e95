// The credential rules every route of a surface answers by: no credential is 401, a key without
// the surface's scope is 403 insufficient_scope, a publishable key never writes, and a key with the
// read scope alone reads but does not write.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createKey, type SignedUp } from './accounts';
import { expectError } from './expect';
import { call } from './http';

/** A route of the surface and whether it reads or writes. */
export type RouteAccess = [method: string, path: string, body: unknown, access: 'read' | 'write'];

/** Calls each route as `owner` with no credential and with keys of its own: a publishable one, `scope`:read alone, and `otherScope` alone. */
export async function expectCredentialRules(baseUrl: string, owner: SignedUp, scope: string, otherScope: string, routes: RouteAccess[]): Promise<void> {
  const [publishable, reader, unrelated] = await Promise.all([
    createKey(baseUrl, owner.token, 'publishable'), createKey(baseUrl, owner.token, 'restricted', [`${scope}:read`]), createKey(baseUrl, owner.token, 'restricted', [otherScope]),
  ]);
  for (const [method, path, body, access] of routes) {
    const as = (token?: string) => call(baseUrl, method, path, body, { token, idempotencyKey: randomUUID() });
    expectError(await as(undefined), 401, 'authentication_required', undefined, `${method} ${path} without a credential`);
    expectError(await as(unrelated.key), 403, 'insufficient_scope', undefined, `${method} ${path} without a ${scope} scope`);
    if (access === 'write') {
      expectError(await as(publishable.key), 403, 'publishable_key_write_denied', undefined, `${method} ${path} with pk_`);
      expectError(await as(reader.key), 403, 'insufficient_scope', undefined, `${method} ${path} with ${scope}:read only`);
    } else {
      assert.equal((await as(reader.key)).status, 200, `${method} ${path} with ${scope}:read`);
    }
  }
}
