// The OpenAPI document as TypeScript integrators use it: stock generators (openapi-typescript for
// the types, openapi-fetch for the calls, both pinned devDependencies) turn GET /v1/openapi.json
// into a typed client, test/generated-client/flow.ts must compile against it under tsc --strict,
// and then walks a client's first hour against the service. A schema that declares a field or a
// status the route does not answer (or the other way round) fails the compile or the run.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { testService } from '../hooks';
import { call } from '../support/http';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const FLOW_DIR = path.join(ROOT, 'test', 'generated-client');
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);
const output = (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}\n${error.stderr ?? ''}`;

describe('a TypeScript client generated from /v1/openapi.json by a stock generator', function () {
  this.timeout(300_000);
  let workDir: string;

  before(async () => {
    workDir = await mkdtemp(path.join(tmpdir(), 'generated-client-ts-'));
    // The flow imports openapi-fetch as an integrator's project would: from its node_modules.
    await symlink(path.join(ROOT, 'node_modules'), path.join(workDir, 'node_modules'), 'dir');
  });
  after(async () => { if (workDir) await rm(workDir, { recursive: true, force: true }); });

  it('generates without a warning, compiles under --strict and walks the flow through typed models', async () => {
    const document = await call(testService().baseUrl, 'GET', '/v1/openapi.json');
    assert.equal(document.status, 200);
    await writeFile(path.join(workDir, 'openapi.json'), JSON.stringify(document.body));
    const generated = await run(bin('openapi-typescript'), ['openapi.json', '--output', 'schema.ts'], { cwd: workDir })
      .catch((error) => assert.fail(`the generator failed:\n${output(error)}`));
    assert.doesNotMatch(generated.stdout + generated.stderr, /warn|error/i, generated.stdout + generated.stderr);

    await copyFile(path.join(FLOW_DIR, 'flow.ts'), path.join(workDir, 'flow.ts'));
    await copyFile(path.join(FLOW_DIR, 'tsconfig.json'), path.join(workDir, 'tsconfig.json'));
    // tsconfig.json sets strict and noEmit: this is `tsc --strict --noEmit` on the flow and the schema.
    await run(bin('tsc'), ['--project', path.join(workDir, 'tsconfig.json')], { cwd: workDir, timeout: 120_000 })
      .catch((error) => assert.fail(`the flow does not compile against the generated types:\n${output(error)}`));

    // Type-checked above; esbuild only strips the types (Node 20 runs no TypeScript).
    const script = path.join(workDir, 'flow.cjs');
    await build({ entryPoints: [path.join(workDir, 'flow.ts')], outfile: script, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'silent' });
    const flow = await run(process.execPath, [script, testService().baseUrl], { cwd: workDir, timeout: 120_000 })
      .catch((error) => assert.fail(`the generated client's flow failed:\n${output(error)}`));
    assert.match(flow.stdout, /every call answered through its typed model/);
  });
});
