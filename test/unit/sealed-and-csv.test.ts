// Issue 38, item 6: the vault takes only full 16-byte GCM tags, and the CSV exports keep every
// formula start a spreadsheet knows as text.
import assert from 'node:assert/strict';
import { csvRow } from '../../src/statements/formats';
import { SecretVault } from '../../src/vault';

describe('sealed secrets (AES-GCM tag length)', () => {
  const vault = new SecretVault('a secret of the settings', 'webhook-secret-vault');

  it('seals with a 16-byte tag and opens what it sealed', () => {
    const sealed = vault.seal('whsec_example');
    assert.equal(Buffer.from(sealed.split('.')[2], 'base64url').length, 16);
    assert.equal(vault.open(sealed), 'whsec_example');
  });

  it('refuses a sealed text whose tag was cut short, however many bytes are left', () => {
    const [version, iv, tag, body] = vault.seal('whsec_example').split('.');
    const full = Buffer.from(tag, 'base64url');
    for (const length of [4, 8, 12, 13, 15]) {
      const cut = [version, iv, full.subarray(0, length).toString('base64url'), body].join('.');
      assert.throws(() => vault.open(cut), /not a sealed secret|auth/i, `a ${length}-byte tag was accepted`);
    }
  });
});

describe('CSV formula guard', () => {
  const cell = (value: unknown) => csvRow(['v'], { v: value }).trimEnd();

  it('prefixes every cell a spreadsheet would read as a formula', () => {
    assert.equal(cell('=1+1'), "'=1+1");
    assert.equal(cell('+1+1'), "'+1+1");
    assert.equal(cell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(cell('-1+cmd|calc'), "'-1+cmd|calc");
    assert.equal(cell('-HYPERLINK("http://x")'), '"\'-HYPERLINK(""http://x"")"');
    assert.equal(cell('\t=1+1'), "'\t=1+1");
    assert.equal(cell('\r=1+1'), '"\'\r=1+1"');
  });

  it('leaves plain text and negative amounts as they are', () => {
    assert.equal(cell('-10.50'), '-10.50');
    assert.equal(cell(-3), '-3');
    assert.equal(cell('ACME Ltd'), 'ACME Ltd');
    assert.equal(cell('a-b'), 'a-b');
  });
});
