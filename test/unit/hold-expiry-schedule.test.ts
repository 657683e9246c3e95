// When the ledger's hold expiry sweeps next (consumers/ledger/hold-expiry.ts): at the earliest
// active hold's expiry, never sooner than the minimum beat, never later than the maximum.
import assert from 'node:assert/strict';
import { nextSweepDelayMs } from '../../consumers/ledger/hold-expiry';

describe('hold expiry: the next sweep', () => {
  const now = Date.parse('2026-11-27T12:00:00Z');
  const at = (msFromNow: number) => new Date(now + msFromNow);

  it('comes when the earliest active hold falls due', () => {
    assert.equal(nextSweepDelayMs(at(4_250), now, 1_000, 10_000), 4_250);
  });

  it('comes after the minimum beat when a hold is due sooner or already past (sent, not yet decided)', () => {
    assert.equal(nextSweepDelayMs(at(300), now, 1_000, 10_000), 1_000);
    assert.equal(nextSweepDelayMs(at(-60_000), now, 1_000, 10_000), 1_000);
  });

  it('comes after the maximum beat when no hold is active, or the earliest is further away', () => {
    assert.equal(nextSweepDelayMs(null, now, 1_000, 10_000), 10_000);
    assert.equal(nextSweepDelayMs(at(7 * 86_400_000), now, 1_000, 10_000), 10_000);
  });
});
