// The shell scripts: shellcheck finds nothing in them (installed by `scripts/stack.sh tools`,
// which npm test runs), and the stack script refuses a command its usage does not name. Its
// status, which needs the stack up, is checked in test/integration/stack-status.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const scripts = [
  ...readdirSync(path.join(ROOT, 'scripts')).filter((f) => f.endsWith('.sh')).map((f) => `scripts/${f}`),
  ...readdirSync(path.join(ROOT, 'scripts', 'stack')).filter((f) => f.endsWith('.sh')).map((f) => `scripts/stack/${f}`),
  '.ci/run',
];
const run = (command: string, args: string[]) => spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

describe('shell scripts', () => {
  it(`pass shellcheck, sources followed (${scripts.length} files)`, function () {
    // shellcheck's own time, which a loaded machine stretches: the run's bound is spawnSync's.
    this.timeout(60_000);
    assert.ok(scripts.includes('scripts/stack/kafka.sh') && scripts.includes('scripts/stack.sh'));
    const checked = run('shellcheck', ['-x', ...scripts]);
    assert.equal(checked.error, undefined, `shellcheck is not installed (scripts/stack.sh tools installs it): ${checked.error}`);
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
  });

  it('stack.sh fails an unknown command with the usage', () => {
    const unknown = run('bash', ['scripts/stack.sh', 'sideways']);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /unknown command 'sideways'/);
    assert.match(unknown.stderr, /usage: scripts\/stack.sh \[up\|down\|status\|tools\]/);
  });
});
