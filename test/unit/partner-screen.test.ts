// Screening a partner's text (src/partners/screen.ts): what is kept of free text, and which
// identifiers and links are refused. Pure: no partner.
import assert from 'node:assert/strict';
import { PARTNER_TEXT_CHARS_MAX, screenedId, screenedText, screenedTextOrNull, screenedUrl } from '../../src/partners/screen';

describe('partner text screening', () => {
  it('turns control characters into one space, unpaired surrogates into U+FFFD, and keeps the rest', () => {
    assert.equal(screenedText('no\u0000\u0007\u001b[31m\r\n\u2028 funds \ud800!'), 'no [31m funds \uFFFD!');
    assert.equal(screenedText('caf\u00e9 \ud83d\udcb8'), 'caf\u00e9 \ud83d\udcb8', 'letters and whole emoji stay');
  });

  it('keeps at most PARTNER_TEXT_CHARS_MAX characters, ends a cut text with an ellipsis, and never splits a surrogate pair', () => {
    const long = screenedText('a'.repeat(100_000));
    assert.equal(long.length, PARTNER_TEXT_CHARS_MAX);
    assert.ok(long.endsWith('…'));
    const pairs = screenedText('\ud83d\udcb8'.repeat(1_000));
    assert.ok(pairs.isWellFormed() && pairs.length <= PARTNER_TEXT_CHARS_MAX);
    assert.equal(screenedText('x'.repeat(PARTNER_TEXT_CHARS_MAX)), 'x'.repeat(PARTNER_TEXT_CHARS_MAX), 'a text at the bound is kept whole');
  });

  it('gives null for no text, or for text that is nothing but control characters', () => {
    assert.equal(screenedTextOrNull(undefined), null);
    assert.equal(screenedTextOrNull(42), null);
    assert.equal(screenedTextOrNull('\u0000\u0001 \r\n'), null);
  });

  it('accepts identifiers of their shape only, and http(s) links without control characters', () => {
    assert.equal(screenedId('fiat_0123456789abcdef'), 'fiat_0123456789abcdef');
    for (const bad of ['', 'fiat_\u0000', 'a b', 'x'.repeat(129), '\ud800', 7, null]) assert.equal(screenedId(bad), null, JSON.stringify(bad));
    assert.equal(screenedUrl('http://127.0.0.1:4000/claimless/claim/claimless_ab'), 'http://127.0.0.1:4000/claimless/claim/claimless_ab');
    for (const bad of ['javascript:alert(1)', 'https://x.test/\u0000', 'https://x.test/a b', 'not a url', `https://x.test/${'a'.repeat(3_000)}`]) {
      assert.equal(screenedUrl(bad), null, bad.slice(0, 40));
    }
  });
});
