// TickBatch (src/idempotency/tick-batch.ts): the calls of one event-loop turn are applied together, every
// caller learns the batch's fate, and a batch never grows past its bound.
import assert from 'node:assert/strict';
import { TickBatch } from '../../src/idempotency/tick-batch';

describe('TickBatch: one apply per event-loop turn', () => {
  it('applies the items submitted in one turn as one batch, in order, and resolves every caller after it', async () => {
    const applied: number[][] = [];
    const batch = new TickBatch<number>(async (items) => { applied.push(items); });
    await Promise.all([1, 2, 3].map((n) => batch.submit(n)));
    await batch.submit(4);
    assert.deepEqual(applied, [[1, 2, 3], [4]]);
  });

  it('rejects every caller of a failed batch with its error, and the next turn starts afresh', async () => {
    let calls = 0;
    const batch = new TickBatch<string>(async (items) => {
      calls++;
      if (items.includes('bad')) throw new Error('refused');
    });
    const results = await Promise.allSettled([batch.submit('good'), batch.submit('bad')]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
    assert.equal((results[0] as PromiseRejectedResult).reason.message, 'refused');
    await batch.submit('good');
    assert.equal(calls, 2);
  });

  it('flushes at batchSizeMax without waiting for the turn to end', async () => {
    const sizes: number[] = [];
    const batch = new TickBatch<number>(async (items) => { sizes.push(items.length); }, 3);
    await Promise.all(Array.from({ length: 7 }, (_, i) => batch.submit(i)));
    assert.deepEqual(sizes, [3, 3, 1]);
  });
});
