// The README's "Balances in time and balance alerts" walk-through works as written: after the first
// session's steps (without its event stream), its shell block runs against the test's service: the
// alert, the transfer that crosses it and the one that does not, one event, and the balance now and
// at the instant taken before.
import assert from 'node:assert/strict';
import { testService } from '../hooks';
import { runReadmeWalkthrough } from '../support/readme-script';

describe('the README\'s balances in time and balance alerts', function () {
  this.timeout(60_000);

  it('runs as written after the first session, each step answering what the README says', async () => {
    const json: any[] = await runReadmeWalkthrough(testService().baseUrl, '## Balances in time and balance alerts', ['me']);
    const [alert, crossing, staying, events, now, then, totalsThen] = json;
    assert.deepEqual([alert.currency, alert.below, alert.above, alert.wallet_id], ['USD', '50.00', null, 'main'], 'the alert');
    assert.deepEqual([crossing.status, staying.status], ['completed', 'completed'], 'the two transfers');
    assert.equal(events.data.length, 1, 'one crossing, none while the balance stays under');
    const attributes = JSON.parse(events.data[0].data.attributes);
    assert.deepEqual([events.data[0].resource_id, attributes.balance_before, attributes.balance_after], [alert.id, '90.00', '45.00']);
    assert.deepEqual(now.balances, [{ currency: 'USD', available: '40.00', held: '0.00', pending: '0.00' }], 'the balance now');
    assert.deepEqual(then.balances, [{ currency: 'USD', available: '90.00', held: '0.00', pending: '0.00' }], 'the balance at $T');
    assert.equal(totalsThen.totals.find((t: { currency: string }) => t.currency === 'USD').available, '90.00', 'the totals at $T');
  });
});
