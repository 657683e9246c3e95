// `scripts/stack.sh status` with the stack up, as npm test has it: one line per component, each
// up (the unit suite runs before the stack is ready, so this check lives here).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

describe('the stack script with the stack up', () => {
  it('stack.sh status names each component up, and exits 0', () => {
    const status = spawnSync('bash', ['scripts/stack.sh', 'status'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    assert.equal(status.status, 0, status.stdout + status.stderr);
    for (const name of ['postgres', 'redis', 'kafka', 'registry']) assert.match(status.stdout, new RegExp(`^${name}: +up `, 'm'));
  });
});
