// Request bodies are typed from the JSON Schemas that validate and document them
// (src/http/route.ts, withBody): reading a field a schema does not declare, or passing a body
// of the wrong shape, does not compile. The @ts-expect-error lines below are the test: were the
// types ever `any` again, they would expect an error that no longer comes, and the build fails.
import assert from 'node:assert/strict';
import type { BodyOf } from '../../src/http/route';
import { transferCommand } from '../../src/transfers/commands';

const faucetLike = {
  type: 'object', additionalProperties: false, required: ['currency', 'amount'],
  properties: { currency: { type: 'string' }, amount: { type: 'string' }, account_id: { type: 'string' } },
} as const;

describe('typed request bodies', () => {
  it('derive a body type from its schema: required fields, optional ones, nothing else', () => {
    const body: BodyOf<typeof faucetLike> = { currency: 'USD', amount: '1.00' };
    // @ts-expect-error: `amout` is not a field of the schema
    const misspelled: unknown = body.amout;
    // @ts-expect-error: `amount` is required
    const missing: BodyOf<typeof faucetLike> = { currency: 'USD' };
    assert.deepEqual([body.amount, body.account_id, misspelled, missing.currency], ['1.00', undefined, undefined, 'USD']);
  });

  it("type the transfer route's body from its schema", () => {
    const command = transferCommand({ amount: '2.50', currency: 'EUR', recipient_email: 'someone@example.com' }, 'c0ffee00-0000-4000-8000-000000000000');
    assert.deepEqual([command.type, command.amount, command.currency, command.recipient_email], ['internal', '2.5', 'EUR', 'someone@example.com']);
    // @ts-expect-error: an amount is a decimal string, never a JS number
    assert.throws(() => transferCommand({ amount: 2.5, currency: 'EUR', recipient_email: 'someone@example.com' }, 'c0ffee00-0000-4000-8000-000000000001'));
  });
});
