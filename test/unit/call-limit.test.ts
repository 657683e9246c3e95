// How many calls a partner is sent at once (src/partners/call-limit.ts): never more than the
// limit lets in, halved once per wave of timeouts (not once per call of the wave), raised by one
// for a whole limit's worth of answers in time, and never outside its floor and cap. Seeded runs
// of random waves check it against a model of the rule.
import assert from 'node:assert/strict';
import { AdaptiveCallLimit, type CallSlot } from '../../src/partners/call-limit';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seeds } from '../support/seeds';

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the calls a partner is sent at once', () => {
  it('halves once for a wave of 64 timeouts, lets no more in than that, and climbs back by answers in time', async () => {
    const limit = new AdaptiveCallLimit(64);
    const wave = await Promise.all(Array.from({ length: 64 }, () => limit.acquire()));
    let admitted = 0;
    const queued = Array.from({ length: 64 }, () => limit.acquire().then((slot) => { admitted += 1; return slot; }));
    await settle();
    assert.equal(admitted, 0, 'the 65th call waits while 64 are out');
    for (const slot of wave) slot.release(true);
    await settle();
    assert.equal(limit.current, 32, 'one wave, one halving');
    assert.equal(admitted, 32, 'as many let in as the new limit');
    const slots: CallSlot[] = await Promise.all(queued.slice(0, 32));
    for (const slot of slots) slot.release(false);
    await settle();
    assert.equal(admitted, 64);
    assert.equal(limit.current, 33, 'a limit of answers in time raises it by one');
    for (const slot of await Promise.all(queued.slice(32))) slot.release(false);
  });

  for (const seed of seeds([47_2026])) {
    it(`keeps to the rule over random waves of answers and timeouts (${replayOf(seed)})`, () => namingSeed(seed, async () => {
      const random = prng(seed);
      const cap = 1 + Math.floor(random() * 64);
      const floor = 1 + Math.floor(random() * Math.min(cap, 4));
      const limit = new AdaptiveCallLimit(cap, floor);
      let model = cap;
      for (let round = 0; round < 300; round++) {
        const size = 1 + Math.floor(random() * 2 * cap);
        const out: CallSlot[] = [];
        const pending = Array.from({ length: size }, () => limit.acquire().then((slot) => { out.push(slot); return slot; }));
        await settle();
        assert.equal(out.length, Math.min(size, Math.floor(model)), `round ${round}: as many in flight as the limit lets in`);
        // The ones in flight end together: all in time, or some time out (one decrease for the wave).
        let done = 0;
        while (done < size) {
          const wave = out.splice(0);
          const timeouts = random() < 0.3 ? 1 + Math.floor(random() * wave.length) : 0;
          wave.forEach((slot, i) => slot.release(i < timeouts));
          if (timeouts > 0) model = Math.max(floor, Math.floor(model / 2));
          for (let i = timeouts; i < wave.length; i++) model = Math.min(cap, model + 1 / Math.floor(model));
          done += wave.length;
          await settle();
          assert.ok(out.length <= Math.floor(model), `round ${round}: ${out.length} let in over a limit of ${Math.floor(model)}`);
        }
        await Promise.all(pending);
        assert.equal(limit.current, Math.floor(model), `round ${round}: the limit follows the rule`);
        assert.ok(limit.current >= floor && limit.current <= cap);
      }
    }));
  }
});
