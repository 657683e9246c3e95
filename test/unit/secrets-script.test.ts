// scripts/secrets.sh, which `npm start` and the Docker entry point use: strong secrets made once,
// kept in a file only its owner reads, the same ones on every later start.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SECRET_NAMES } from '../../src/secrets';

const ROOT = path.resolve(__dirname, '../../..');
const run = (script: string, env: NodeJS.ProcessEnv = {}) => spawnSync('bash', ['-c', script], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH, ...env } });

describe('scripts/secrets.sh', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secrets-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const read = (file: string) => Object.fromEntries(fs.readFileSync(file, 'utf8').trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));

  it('generates each secret once, strong and distinct, in a file of mode 600, and keeps them on the next start', () => {
    const file = path.join(dir, 'stack', 'secrets.env');
    const first = run(`bash scripts/secrets.sh ${file}`);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stderr, new RegExp(`generated ${SECRET_NAMES.join(' ')} in ${file}`));
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const made = read(file);
    assert.deepEqual(Object.keys(made), [...SECRET_NAMES]);
    for (const [name, value] of Object.entries(made)) assert.match(value, name === 'MASTER_KEY' ? /^mk_[A-Za-z0-9_-]{43}$/ : /^[A-Za-z0-9_-]{43}$/, name);
    assert.equal(new Set(Object.values(made)).size, SECRET_NAMES.length);

    const again = run(`bash scripts/secrets.sh ${file}`);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stderr, /using the secrets kept in/);
    assert.deepEqual(read(file), made);
  });

  it('exports the kept secrets, a variable already set in the environment winning', () => {
    const file = path.join(dir, 'secrets.env');
    const shown = run(`source scripts/secrets.sh; ensure_secrets ${file} 2>/dev/null; export_secrets ${file}; echo "$MASTER_KEY $JWT_SECRET"`, { JWT_SECRET: 'given-by-the-operator' });
    assert.equal(shown.status, 0, shown.stderr);
    const [master, jwt] = shown.stdout.trim().split(' ');
    assert.equal(master, read(file).MASTER_KEY);
    assert.equal(jwt, 'given-by-the-operator');
  });
});
