// The OpenAPI document as integrators use it: a stock generator (openapi-python-client, pinned)
// builds a Python client from GET /v1/openapi.json, and test/generated-client/flow.py walks a
// client's first hour through its typed models. A route answering a status or field the document
// lacks, or a field the document calls required but the route omits, fails the flow.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { testService } from '../hooks';
import { call } from '../support/http';

const run = promisify(execFile);
const GENERATOR = 'openapi-python-client==0.29.1';
const ROOT = path.resolve(__dirname, '../../..');
/**
 * The generator's virtualenv, one per machine and version (as Maven's jars of the stack are), in
 * the user's cache: a clone's first run does not install it again (about 10 s of CPU).
 */
const VENV = path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'payment-orchestration', GENERATOR.replace('==', '-'));
const PYTHON = path.join(VENV, 'bin', 'python');

/**
 * Makes the virtualenv with the generator once (PyPI on first use): installed by the machine's
 * pip when it has one (a venv of its own pip costs 3 s of CPU), its files compiled as they are
 * first imported, not all at install (2 s more). It is made beside its place and renamed into it,
 * so a run beside this one (another clone's) never uses one half made; the generator is run as a
 * module (`python -m`), as its scripts name the place it was made in.
 */
async function ensureGenerator(): Promise<void> {
  if (existsSync(VENV)) return;
  const making = `${VENV}.${process.pid}.tmp`;
  await rm(making, { recursive: true, force: true });
  await mkdir(path.dirname(VENV), { recursive: true });
  const install = ['install', '--quiet', '--disable-pip-version-check', '--no-compile', GENERATOR];
  const machinePip = await run('python3', ['-m', 'pip', '--version']).then(() => true, () => false);
  const python = path.join(making, 'bin', 'python');
  if (machinePip) {
    await run('python3', ['-m', 'venv', '--without-pip', making]);
    await run('python3', ['-m', 'pip', '--python', python, ...install], { timeout: 240_000 });
  } else {
    await run('python3', ['-m', 'venv', making]);
    await run(python, ['-m', 'pip', ...install], { timeout: 240_000 });
  }
  await rename(making, VENV).catch(async (error: NodeJS.ErrnoException) => {
    // Another run made it first: theirs is whole.
    if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    await rm(making, { recursive: true, force: true });
  });
}

describe('a client generated from /v1/openapi.json by a stock generator', function () {
  this.timeout(300_000);
  let workDir: string;

  before(async () => {
    await ensureGenerator();
    workDir = await mkdtemp(path.join(tmpdir(), 'generated-client-'));
  });
  after(async () => { if (workDir) await rm(workDir, { recursive: true, force: true }); });

  it('generates without a warning and walks sign-up, funding, a transfer, balances and errors through typed models', async () => {
    const document = await call(testService().baseUrl, 'GET', '/v1/openapi.json');
    assert.equal(document.status, 200);
    await writeFile(path.join(workDir, 'openapi.json'), JSON.stringify(document.body));
    // No post-hooks: the generator would otherwise run a formatter this machine need not have.
    await writeFile(path.join(workDir, 'config.yaml'), 'post_hooks: []\n');
    const generated = await run(PYTHON, ['-m', 'openapi_python_client',
      'generate', '--path', 'openapi.json', '--meta', 'none', '--output-path', 'client', '--config', 'config.yaml',
    ], { cwd: workDir });
    // The generator warns, and skips the piece, where it cannot turn a schema into a model.
    assert.doesNotMatch(generated.stdout + generated.stderr, /warning|error/i, generated.stdout + generated.stderr);

    const flow = await run(PYTHON, [path.join(ROOT, 'test', 'generated-client', 'flow.py'), testService().baseUrl], {
      cwd: workDir, env: { ...process.env, PYTHONPATH: workDir }, timeout: 120_000,
    }).catch((error) => assert.fail(`the generated client's flow failed:\n${error.stdout}\n${error.stderr}`));
    assert.match(flow.stdout, /every call answered through its typed model/);
  });
});
