// One form of an email address (ledger/emails.ts), over a space of addresses drawn from letters
// that lower-case, normalize or both in unusual ways: it is a fixed point (a form of a form is the
// form), addresses that differ only by case or by compatibility characters share it, and on
// ASCII it is plain lower-casing, as Postgres's lower() is (the database compares with that).
import assert from 'node:assert/strict';
import { canonicalEmail } from '../../ledger/emails';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seeds } from '../support/seeds';

/** Letters with a story: dotted and dotless i, Kelvin and Ångström signs, ligatures, full-width, final sigma, a combining dot. */
const UNUSUAL = ['İ', 'ı', 'I', 'i', 'K', 'Å', 'ﬁ', 'ß', 'ẞ', 'Ｉ', 'ｉ', 'Σ', 'ς', 'σ', '\u0307', 'Ⅻ', '①', 'ǅ'];
const ASCII = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i));

describe('one form of an email address', () => {
  for (const seed of seeds([20_261_203])) {
    it(`is a fixed point, and plain lower-casing on ASCII (either case), over 5,000 drawn addresses (${replayOf(seed)})`, () => namingSeed(seed, () => {
      const random = prng(seed);
      const pick = (from: readonly string[]) => from[Math.floor(random() * from.length)];
      for (let n = 0; n < 5_000; n++) {
        const length = 1 + Math.floor(random() * 12);
        const mixed = Array.from({ length }, () => (random() < 0.4 ? pick(UNUSUAL) : pick(ASCII))).join('');
        const form = canonicalEmail(`${mixed}@example.test`);
        assert.equal(canonicalEmail(form), form, `the form of ${JSON.stringify(mixed)} is its own form`);
        const ascii = Array.from({ length }, () => pick(ASCII)).join('');
        assert.equal(canonicalEmail(ascii), ascii.toLowerCase(), `${JSON.stringify(ascii)}: ASCII is lower-cased and nothing else`);
        assert.equal(canonicalEmail(ascii.toUpperCase()), canonicalEmail(ascii), `${JSON.stringify(ascii)}: its upper case has its form`);
      }
    }));
  }

  it('gives full-width and compatibility spellings the form of what they stand for, and keeps a dotted capital I apart from i', () => {
    assert.equal(canonicalEmail('ＡＬＩＣＥ@ＥＸＡＭＰＬＥ.ＣＯＭ'), 'alice@example.com');
    assert.equal(canonicalEmail('ﬁnance@example.com'), 'finance@example.com');
    assert.equal(canonicalEmail('Bob@Example.COM'), 'bob@example.com');
    // JavaScript lower-cases İ to i and a combining dot; the form keeps that, so it is no ASCII i.
    assert.notEqual(canonicalEmail('İİİ@example.test'), 'iii@example.test');
  });
});
