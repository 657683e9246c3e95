// The ledger's sweeps woken by announcements and timers (consumers/ledger/serial-sweeps.ts): never
// two at once, one more after a sweep that was asked for while it ran (however often), its
// outcome heard only when no sweep follows, and nothing after stop.
import assert from 'node:assert/strict';
import { SerialSweeps } from '../../consumers/ledger/serial-sweeps';

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A sweep that ends when the test says so, counting how many ran and how many at once. */
function heldSweeps() {
  const state = { started: 0, atOnce: 0, most: 0, settled: [] as number[], release: [] as Array<() => void> };
  const sweeps = new SerialSweeps<number>(() => {
    state.started += 1;
    state.atOnce += 1;
    state.most = Math.max(state.most, state.atOnce);
    const n = state.started;
    return new Promise<number>((resolve) => state.release.push(() => { state.atOnce -= 1; resolve(n); }));
  }, (outcome) => state.settled.push(outcome));
  const endCurrent = async () => { state.release.shift()!(); await settle(); };
  return { sweeps, state, endCurrent };
}

describe('sweeps one at a time', () => {
  it('runs once more after a sweep asked for three times while it ran, never two at once, and hears only the last', async () => {
    const { sweeps, state, endCurrent } = heldSweeps();
    sweeps.sweep();
    sweeps.sweep();
    sweeps.sweep();
    sweeps.sweep();
    assert.equal(state.started, 1, 'asked while one runs: none starts beside it');
    await endCurrent();
    assert.equal(state.started, 2, 'the asks meanwhile make one more sweep');
    assert.deepEqual(state.settled, [], 'a sweep followed by another is not heard');
    await endCurrent();
    assert.equal(state.started, 2, 'nothing asked meanwhile: no third');
    assert.deepEqual(state.settled, [2]);
    assert.equal(state.most, 1);
  });

  it('starts nothing once stopped, and its stop waits for the sweep under way without hearing it', async () => {
    const { sweeps, state, endCurrent } = heldSweeps();
    sweeps.sweep();
    sweeps.sweep();
    let stopped = false;
    const stopping = sweeps.stop().then(() => { stopped = true; });
    await settle();
    assert.equal(stopped, false, 'stop waits for the sweep under way');
    await endCurrent();
    await stopping;
    sweeps.sweep();
    assert.equal(state.started, 1, 'neither the sweep asked before stop nor one asked after it runs');
    assert.deepEqual(state.settled, []);
  });
});
