// Graceful shutdown on SIGTERM: the process finishes the requests it has, then exits cleanly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { eventually } from '../support/http';

describe('graceful shutdown', function () {
  this.timeout(90_000);

  it('answers the request in flight, refuses new connections and exits 0 on SIGTERM', async () => {
    const port = 39_000 + Math.floor(Math.random() * 1000);
    const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'src', 'main.js')], {
      env: { ...process.env, ROLES: 'api', PORT: String(port), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    await eventually(async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined), 60_000, 'the service to listen');

    // /readyz checks all four dependencies, so it is still running when the signal arrives.
    const inFlight = fetch(`${base}/readyz`);
    await new Promise((resolve) => setTimeout(resolve, 5));
    child.kill('SIGTERM');
    const response = await inFlight;
    assert.equal(response.status, 200);
    assert.equal(await exited, 0);
    assert.match(output, /"msg":"shutting down: draining in-flight work"/);
    assert.match(output, /"msg":"stopped"/);
    await assert.rejects(fetch(`${base}/healthz`));
  });
});
