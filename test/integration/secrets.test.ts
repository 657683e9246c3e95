// Issue 38, item 1: no secret has a default a network can reach. A process listening beyond
// loopback refuses to start without its own secrets, naming each one; on loopback it makes strong
// ones; the mock rails' controls take their own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { SECRET_NAMES } from '../../src/secrets';
import { railsUrl } from '../hooks';
import { call } from '../support/http';
import { controlHeaders } from '../support/secrets';

const MAIN = path.join(__dirname, '..', '..', 'src', 'main.js');

/** Runs the service with `env` (no secrets of the test process) until it exits; its code and output. */
function runService(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', MOCK_RAILS_PORT: '0', LOG_LEVEL: 'info' };
  for (const name of SECRET_NAMES) delete base[name];
  const child = spawn(process.execPath, [MAIN], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.once('exit', (code) => { clearTimeout(timer); resolve({ code, output }); }));
}

describe('secrets (issue 38)', function () {
  this.timeout(120_000);

  it('a process bound to 0.0.0.0 without its secrets exits non-zero, naming each missing one', async () => {
    const { code, output } = await runService({ HOST: '0.0.0.0', ROLES: 'all' });
    assert.notEqual(code, 0, output);
    assert.ok(code !== null, 'the process did not exit by itself');
    for (const name of SECRET_NAMES) assert.match(output, new RegExp(`${name} is not set`), `${name} is not named: ${output}`);
  });

  it('refuses the values earlier versions published, and names only what is missing', async () => {
    const { code, output } = await runService({
      HOST: '0.0.0.0', ROLES: 'ledger', MASTER_KEY: 'mk_sandbox_local_master_key_change_me', JWT_SECRET: 'a-secret-of-its-own-1234567890',
    });
    assert.notEqual(code, 0, output);
    assert.match(output, /MASTER_KEY is a published default value/);
    for (const name of ['PARTNER_CLIENT_SECRET', 'PARTNER_TOKEN_SECRET', 'WEBHOOK_SECRET_KEY']) assert.match(output, new RegExp(`${name} is not set`));
    assert.doesNotMatch(output, /JWT_SECRET is not set/);
    // A ledger process calls no rails control: it is not asked for their secret.
    assert.doesNotMatch(output, /MOCK_RAILS_CONTROL_SECRET/);
  });

  it('checks the settings the same way in process: every address beyond loopback, and the live environment', () => {
    const bare: NodeJS.ProcessEnv = {};
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'payments.example.com']) {
      assert.throws(() => loadConfig({ ...bare, HOST: host }), /MASTER_KEY is not set; JWT_SECRET is not set/, host);
    }
    assert.throws(() => loadConfig({ ...bare, ENVIRONMENT: 'live' }), /serves the live environment/);
    // On loopback: strong secrets made for the process, the same for every config it loads.
    const one = loadConfig({ ...bare, HOST: '127.0.0.1' });
    const two = loadConfig({ ...bare, HOST: 'localhost' });
    assert.equal(one.masterKey, two.masterKey);
    assert.match(one.masterKey, /^mk_[A-Za-z0-9_-]{43}$/);
    for (const secret of [one.jwtSecret, one.partnerClientSecret, one.partnerTokenSecret, one.webhookSecretKey, one.mockRailsControlSecret]) {
      assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    }
    assert.equal(new Set([one.masterKey, one.jwtSecret, one.partnerClientSecret, one.partnerTokenSecret, one.webhookSecretKey, one.mockRailsControlSecret]).size, 6);
  });

  it('the mock rails refuse their sandbox controls without the control secret', async () => {
    const rails = railsUrl();
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong' }, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }]) {
      const refused = await call(`${rails}/fiat`, 'POST', '/_control/outage?ms=0', undefined, { headers });
      assert.equal(refused.status, 401, JSON.stringify(headers));
      assert.equal((await call(`${rails}/fiat`, 'GET', '/_control/stats', undefined, { headers })).status, 401);
    }
    assert.equal((await call(`${rails}/fiat`, 'POST', '/_control/outage?ms=0', undefined, { headers: controlHeaders() })).status, 200);
    assert.equal((await call(`${rails}/fiat`, 'GET', '/_control/stats', undefined, { headers: controlHeaders() })).status, 200);
  });
});
