// Rules that existed without a test (issue: reliability): GET /v1/transactions/{id}, the
// transactions:read scope, and the transfer scopes of rk_ keys over
// HTTP. (The planned wallets routes SPEC.md section 4 listed are built now: wallets.test.ts.)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { createKey, signUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { fund, transfer } from '../support/money';

describe('transactions and rk_ scopes', () => {
  const base = () => testService().baseUrl;

  it('GET /v1/transactions/{id}: the own transaction; 403 for another account; 404 unknown; 400 a bad id', async () => {
    const owner = await signUp(base());
    const stranger = await signUp(base());
    const recipient = await signUp(base());
    await fund(base(), owner.key, 'GBP', '20.00');
    const sent = await transfer(base(), owner.key, { recipient_email: recipient.account.email, amount: '4.50', currency: 'GBP' });
    assert.equal(sent.status, 201);
    const list = await call(base(), 'GET', '/v1/transactions?limit=1', undefined, { token: owner.key });
    const [latest] = list.body.data;
    assert.equal(latest.transfer_id, sent.body.transfer_id);

    const one = await call(base(), 'GET', `/v1/transactions/${latest.id}`, undefined, { token: owner.key });
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, latest);
    assert.deepEqual([one.body.direction, one.body.amount, one.body.currency, one.body.balance_after], ['debit', '4.50', 'GBP', '15.50']);

    expectError(await call(base(), 'GET', `/v1/transactions/${latest.id}`, undefined, { token: stranger.key }), 403, 'cross_account_access_denied');
    expectError(await call(base(), 'GET', `/v1/transactions/${randomUUID()}`, undefined, { token: owner.key }), 404, 'resource_not_found');
    expectError(await call(base(), 'GET', '/v1/transactions/not-a-uuid', undefined, { token: owner.key }), 400, 'invalid_request', 'id');
  });

  it('lets an rk_ key read transactions only with transactions:read', async () => {
    const owner = await signUp(base());
    const reader = await createKey(base(), owner.token, 'restricted', ['transactions:read']);
    const other = await createKey(base(), owner.token, 'restricted', ['transfers:read']);
    assert.equal((await call(base(), 'GET', '/v1/transactions', undefined, { token: reader.key })).status, 200);
    expectError(await call(base(), 'GET', '/v1/transactions', undefined, { token: other.key }), 403, 'insufficient_scope');
    expectError(await call(base(), 'GET', `/v1/transactions/${randomUUID()}`, undefined, { token: other.key }), 403, 'insufficient_scope');
  });

  it('lets an rk_ key send transfers only with transfers:write, and read them only with transfers:read', async () => {
    const owner = await signUp(base());
    const recipient = await signUp(base());
    await fund(base(), owner.key, 'EUR', '10.00');
    const writer = await createKey(base(), owner.token, 'restricted', ['transfers:write']);
    const reader = await createKey(base(), owner.token, 'restricted', ['transfers:read']);
    const body = { recipient_email: recipient.account.email, amount: '1.00', currency: 'EUR' };

    expectError(await transfer(base(), reader.key, body), 403, 'insufficient_scope');
    const sent = await transfer(base(), writer.key, body);
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    expectError(await call(base(), 'GET', `/v1/transfers/${sent.body.transfer_id}`, undefined, { token: writer.key }), 403, 'insufficient_scope');
    expectError(await call(base(), 'GET', '/v1/transfers', undefined, { token: writer.key }), 403, 'insufficient_scope');
    const read = await call(base(), 'GET', `/v1/transfers/${sent.body.transfer_id}`, undefined, { token: reader.key });
    assert.equal(read.status, 200);
    assert.equal(read.body.status, 'completed');
    const { db } = testService().runtime;
    assert.equal((await db('transfers').where('account_id', owner.account.id)).length, 1, 'the refused write moved nothing');
  });
});
