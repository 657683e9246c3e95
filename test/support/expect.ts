// Assertions on the error body of SPEC.md section 2, shared by the integration tests.
import assert from 'node:assert/strict';
import type { JsonResponse } from './http';

/** The response is the error body with this status and code (and `details`, when given). */
export function expectError(response: JsonResponse, status: number, code: string, details?: string | null, what = ''): void {
  const context = `${what ? `${what}: ` : ''}${response.status} ${JSON.stringify(response.body)}`;
  assert.equal(response.status, status, context);
  assert.equal(response.body?.success, false, context);
  assert.equal(response.body.error, code, context);
  assert.equal(typeof response.body.message, 'string', context);
  assert.ok(response.body.message.length > 0, context);
  if (details !== undefined) assert.equal(response.body.details, details, context);
}
