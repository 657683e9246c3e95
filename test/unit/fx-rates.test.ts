// Sandbox FX prices (src/fx/rates.ts; DESIGN.md section 5b): deterministic in the clock, the
// spread taken on every quote, every step rounded against the client, so that no round trip
// ever gives back more than it took.
import assert from 'node:assert/strict';
import { Money, type Currency } from '../../ledger/money';
import { isSupportedPair, midRate, price, SPREAD } from '../../ledger/fx-rates';
import { prng } from '../support/prng';

const PAIRS: Array<[Currency, Currency]> = [['USD', 'EUR'], ['EUR', 'USD'], ['USD', 'GBP'], ['GBP', 'USD'], ['EUR', 'GBP'], ['GBP', 'EUR']];
const T0 = new Date('2026-11-23T00:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

describe('fx rates', () => {
  it('quote USD, EUR and GBP among themselves, and nothing else', () => {
    for (const [from, to] of PAIRS) assert.equal(isSupportedPair(from, to), true, `${from}/${to}`);
    for (const [from, to] of [['USD', 'USD'], ['USD', 'USDC'], ['USDC', 'EUR'], ['EURC', 'USDC']] as Array<[Currency, Currency]>) {
      assert.equal(isSupportedPair(from, to), false, `${from}/${to}`);
    }
  });

  it('move with the clock, the same at the same moment, within 0.5 % of their base', () => {
    assert.equal(midRate('USD', 'EUR', at(7)).toFixed(), midRate('USD', 'EUR', at(7)).toFixed());
    assert.notEqual(midRate('USD', 'EUR', at(0)).toFixed(), midRate('USD', 'EUR', at(5)).toFixed());
    assert.equal(midRate('USD', 'EUR', at(60)).toFixed(), midRate('USD', 'EUR', at(0)).toFixed(), 'one period later');
    for (let minute = 0; minute < 60; minute++) {
      const mid = midRate('USD', 'EUR', at(minute));
      assert.ok(mid.isGreaterThanOrEqualTo('0.9154') && mid.isLessThanOrEqualTo('0.9246'), `${minute}: ${mid.toFixed()}`);
    }
  });

  it('derive each inverse as 1 / mid, never quoted apart', () => {
    for (const minute of [0, 13, 29, 44]) {
      const product = midRate('EUR', 'GBP', at(minute)).times(midRate('GBP', 'EUR', at(minute)));
      assert.ok(product.minus(1).abs().isLessThan('1e-15'), product.toFixed());
    }
  });

  it('take the spread and round the rate and the amount down', () => {
    const quote = price('USD', 'EUR', new Money('1000.00'), at(0));
    assert.equal(quote.spread, SPREAD.toFixed());
    const exact = new Money(quote.midRate).times(new Money(1).minus(SPREAD));
    assert.ok(new Money(quote.rate).isLessThanOrEqualTo(exact));
    assert.ok(exact.minus(quote.rate).isLessThan('0.000002'));
    assert.match(quote.rate, /^\d+\.\d{6}$/);
    assert.equal(quote.toAmount, new Money('1000').times(quote.rate).decimalPlaces(2, Money.ROUND_DOWN).toFixed(2));
    assert.match(quote.toAmount, /^\d+\.\d{2}$/);
  });

  it('round at the edges: a cent buys nothing or a cent, a huge amount stays exact', () => {
    assert.equal(price('USD', 'EUR', new Money('0.01'), at(0)).toAmount, '0.00');
    assert.equal(price('GBP', 'USD', new Money('0.01'), at(0)).toAmount, '0.01');
    const huge = price('USD', 'GBP', new Money('999999999999999999.99'), at(3));
    assert.equal(huge.toAmount, new Money('999999999999999999.99').times(huge.rate).decimalPlaces(2, Money.ROUND_DOWN).toFixed(2));
  });

  it('never make money on a round trip, at any moment, for any amount', () => {
    const random = prng(20261123);
    for (let i = 0; i < 5_000; i++) {
      const [from, to] = PAIRS[Math.floor(random() * PAIRS.length)];
      const moment = at(random() * 24 * 60);
      const start = new Money(Math.floor(random() * 10_000_000)).dividedBy(100).plus('0.01');
      const there = price(from, to, start, moment).toAmount;
      if (new Money(there).isZero()) continue;
      const back = price(to, from, new Money(there), moment).toAmount;
      assert.ok(new Money(back).isLessThan(start), `${start.toFixed(2)} ${from} → ${there} ${to} → ${back} ${from}`);
    }
  });
});
