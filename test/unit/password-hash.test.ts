// Password hashes at the configured scrypt cost (PASSWORD_HASH_COST): a hash keeps the cost it
// was made with, so lowering or raising the setting never locks anyone out.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hashPassword, verifyPassword } from '../../src/auth/credentials';
import { loadConfig } from '../../src/config';
import { SECRET_NAMES } from '../../src/secrets';

describe('password hashes at the configured cost', () => {
  it('verifies a password against a hash made at another cost than the current one, and refuses a wrong one', async () => {
    const stored = await hashPassword('correct horse battery staple', 16_384);
    assert.match(stored, /^scrypt\$16384\$8\$1\$/);
    assert.equal(await verifyPassword('correct horse battery staple', stored, 1024), true);
    assert.equal(await verifyPassword('correct horse battery stapl', stored, 1024), false);
    const cheap = await hashPassword('correct horse battery staple', 1024);
    assert.match(cheap, /^scrypt\$1024\$/);
    assert.equal(await verifyPassword('correct horse battery staple', cheap, 16_384), true);
  });

  it('checks an unknown email against a dummy hash and says no', async () => {
    assert.equal(await verifyPassword('anything', null, 1024), false);
  });

  it('takes a power of two from 1024, and in live nothing below the default', () => {
    const secrets = Object.fromEntries(SECRET_NAMES.map((name) => [name, `${name.toLowerCase()}_${randomBytes(24).toString('base64url')}`]));
    assert.equal(loadConfig({ HOST: '127.0.0.1' }).passwordHashCost, 16_384);
    assert.equal(loadConfig({ HOST: '127.0.0.1', PASSWORD_HASH_COST: '1024' }).passwordHashCost, 1024);
    for (const bad of ['512', '1000', '3000', '2097152', 'cheap']) assert.throws(() => loadConfig({ HOST: '127.0.0.1', PASSWORD_HASH_COST: bad }), /PASSWORD_HASH_COST/, bad);
    assert.throws(() => loadConfig({ ...secrets, ENVIRONMENT: 'live', PASSWORD_HASH_COST: '1024' }), /for sandboxes only/);
    assert.equal(loadConfig({ ...secrets, ENVIRONMENT: 'live', PASSWORD_HASH_COST: '32768' }).passwordHashCost, 32_768);
  });
});
