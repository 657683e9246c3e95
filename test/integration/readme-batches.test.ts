// The README's "Transfer batches" walk-through works as written: after the first session's steps
// (without its event stream), its shell block runs against the test's service and each step
// answers what the README says: an atomic batch created in full and read again, an atomic batch
// with a bad item that moves nothing, and the same not atomic, its good item created.
import assert from 'node:assert/strict';
import { testService } from '../hooks';
import { runReadmeWalkthrough } from '../support/readme-script';

describe('the README\'s transfer batches', function () {
  this.timeout(60_000);

  it('runs as written after the first session, each step answering what the README says', async () => {
    const json: any[] = await runReadmeWalkthrough(testService().baseUrl, '## Transfer batches', ['me', 'batch']);
    const [created, read, atomicFailed, partial] = json;
    assert.deepEqual([created.status, created.items.map((i: { status: string }) => i.status)], ['completed', ['created', 'created']], 'both created');
    assert.deepEqual(read, created, 'GET reads the batch again');
    assert.deepEqual([atomicFailed.status, atomicFailed.items.map((i: { status: string }) => i.status)], ['failed', ['not_created', 'refused']]);
    assert.deepEqual([atomicFailed.items[1].error.error, atomicFailed.items[1].error.details], ['recipient_not_found', 'transfers[1].recipient_email']);
    assert.deepEqual([partial.status, partial.items.map((i: { status: string }) => i.status)], ['partial', ['created', 'refused']]);
    const balance = await testService().runtime.db.raw(
      `SELECT la.balance::text FROM ledger_accounts la JOIN accounts a ON a.id = la.account_id WHERE a.id = ? AND la.kind = 'available' AND la.currency = 'USD'`, [created.items[0] && (await transferOwner(created.items[0].transfer_id))]);
    assert.equal(Number(balance.rows[0].balance), 86, '100.00 less the first session\'s 10.00 and the batches\' 3.00 and 1.00');
  });
});

async function transferOwner(transferId: string): Promise<string> {
  const row = await testService().runtime.db('transfers').where('id', transferId).first('account_id');
  return row.account_id;
}
