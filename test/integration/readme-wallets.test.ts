// The README's "Wallets and holds" walk-through works as written: after the first session's
// steps (without its event stream), its shell block runs against the test's service and each
// step answers what the README says: the wallet, the money moved into it, the hold, its final
// capture, the refused void, a batch paying from the wallet and the main balance, the wallet
// emptied and closed.
import assert from 'node:assert/strict';
import { testService } from '../hooks';
import { runReadmeWalkthrough } from '../support/readme-script';

describe('the README\'s wallets and holds', function () {
  this.timeout(60_000);

  it('runs as written after the first session, each step answering what the README says', async () => {
    const json: any[] = await runReadmeWalkthrough(testService().baseUrl, '## Wallets and holds', ['me', 'wallet', 'hold']);
    const [wallet, moved, walletBalances, entries, hold, mainBalances, captured, refusedVoid, paid, emptied, closed] = json;
    assert.deepEqual([wallet.name, wallet.status], ['Savings', 'open'], 'the wallet');
    assert.deepEqual([moved.status, moved.amount, moved.to_wallet_id], ['completed', '30.00', wallet.id], 'money moved into it');
    assert.deepEqual(walletBalances.balances, [{ currency: 'USD', available: '30.00', held: '0.00', pending: '0.00' }]);
    assert.deepEqual(entries.data.map((e: { amount: string }) => e.amount), ['30.00']);
    assert.deepEqual([hold.status, hold.amount], ['active', '20.00'], 'the hold');
    assert.deepEqual(mainBalances.balances, [{ currency: 'USD', available: '40.00', held: '20.00', pending: '0.00' }], '90.00 less 30.00 moved and 20.00 held');
    assert.deepEqual([captured.status, captured.captured_amount, captured.released_amount], ['captured', '12.00', '8.00'], 'the final capture');
    assert.equal(refusedVoid.error, 'hold_not_active', 'the void after it');
    assert.deepEqual([paid.status, paid.items.map((i: { status: string }) => i.status)], ['completed', ['created', 'created']], 'the batch, 5.00 of it from the wallet');
    assert.deepEqual([emptied.status, emptied.amount], ['completed', '25.00'], 'what the batch left in the wallet');
    assert.equal(closed.status, 'closed', 'the wallet, closed');
  });
});
