// The simulation's rate oracle (test/simulation/rates.ts) judges prices by the published table, not
// by the service's word: every price the service's own pricing gives over two hours passes it, and
// a price with the wrong spread, outside the band, of the inverse pair, or that jumps faster than
// the clock allows fails it.
import assert from 'node:assert/strict';
import { Money } from '../../ledger/money';
import { price } from '../../ledger/fx-rates';
import { Findings } from '../simulation/findings';
import { payoutAt, RateBook } from '../simulation/rates';

const shown = (from: 'USD' | 'EUR' | 'GBP', to: 'USD' | 'EUR' | 'GBP', atMs: number) => {
  const p = price(from, to, new Money('100'), new Date(atMs));
  return { rate: p.rate, mid_rate: p.midRate, spread: p.spread, toAmount: p.toAmount };
};
const T0 = Date.parse('2026-11-28T00:00:00Z');
const PAIRS = [['USD', 'EUR'], ['EUR', 'USD'], ['USD', 'GBP'], ['GBP', 'USD'], ['EUR', 'GBP'], ['GBP', 'EUR']] as const;

describe('simulation rate oracle', () => {
  it("passes every price the service's pricing gives, each pair either way, over two hours", () => {
    const findings = new Findings(false);
    const book = new RateBook(findings);
    for (let ms = 0; ms <= 2 * 3_600_000; ms += 37_000) {
      for (const [from, to] of PAIRS) {
        const p = shown(from, to, T0 + ms);
        book.observe(`${from}->${to} at ${ms}`, 0, from, to, p, T0 + ms, T0 + ms + 50);
        assert.ok(payoutAt('100', p.rate).isEqualTo(p.toAmount));
      }
    }
    assert.deepEqual(findings.failures, []);
    assert.ok(findings.passed > 1_000);
  });

  const failsWith = (check: RegExp, corrupt: (p: ReturnType<typeof shown>) => Partial<ReturnType<typeof shown>>, from: 'USD' | 'EUR' | 'GBP' = 'USD', to: 'USD' | 'EUR' | 'GBP' = 'EUR', earlierMs = 60_000) => {
    const findings = new Findings(false);
    const book = new RateBook(findings);
    book.observe('earlier', 0, from, to, shown(from, to, T0), T0, T0 + 50);
    const p = shown(from, to, T0 + earlierMs);
    book.observe('now', 0, from, to, { ...p, ...corrupt(p) }, T0 + earlierMs, T0 + earlierMs + 50);
    assert.ok(findings.failures.some((f) => check.test(f.check)), `${check}: ${JSON.stringify(findings.failures)}`);
  };

  it('fails a rate without the published spread, or not rounded down to 6 decimals', () => {
    failsWith(/the mid less the published spread/, (p) => ({ rate: p.mid_rate }));
    failsWith(/the mid less the published spread/, () => ({ spread: '0.002' }));
    failsWith(/the mid less the published spread/, (p) => ({ rate: `${p.rate}9` }));
  });

  it("fails a mid outside its pair's band, and the inverse pair's mid given for a pair", () => {
    failsWith(/within the published band/, () => ({ mid_rate: '0.95', rate: new Money('0.95').times('0.9975').decimalPlaces(6, Money.ROUND_DOWN).toFixed(6) }));
    failsWith(/within the published band/, (p) => {
      const inverse = new Money(1).dividedBy(p.mid_rate);
      return { mid_rate: inverse.toFixed(6), rate: inverse.times('0.9975').decimalPlaces(6, Money.ROUND_DOWN).toFixed(6) };
    }, 'GBP', 'USD');
  });

  it('fails a mid that moved further than the clock allows since an earlier one, and passes it given the time', () => {
    // Within the band, but 0.4 % from a mid seen a minute before: the clock allows about 0.03 %.
    const jump = (p: ReturnType<typeof shown>) => {
      const mid = new Money(p.mid_rate).times('1.004');
      return { mid_rate: mid.toFixed(6), rate: mid.times('0.9975').decimalPlaces(6, Money.ROUND_DOWN).toFixed(6) };
    };
    failsWith(/no faster than the published clock allows/, jump, 'USD', 'GBP');
    const findings = new Findings(false);
    const book = new RateBook(findings);
    book.observe('earlier', 0, 'USD', 'GBP', shown('USD', 'GBP', T0), T0, T0 + 50);
    const later = shown('USD', 'GBP', T0 + 25 * 60_000);
    book.observe('much later', 0, 'USD', 'GBP', later, T0 + 25 * 60_000, T0 + 25 * 60_000 + 50);
    assert.deepEqual(findings.failures, []);
  });
});
