// Graceful shutdown on SIGTERM: the process finishes the requests it has, then exits cleanly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { TEST_PASSWORD, uniqueEmail } from '../support/accounts';
import { eventually } from '../support/http';

describe('graceful shutdown', function () {
  this.timeout(180_000);

  it('answers the request in flight, refuses new connections and exits 0 on SIGTERM', async () => {
    // Port 0: the process takes a free port and logs it (a port picked at random here could be
    // taken meanwhile by any outgoing connection of the machine).
    const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'src', 'main.js')], {
      env: { ...process.env, ROLES: 'api', PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // A loaded machine can take long to start a process (migrations, schemas, the reply group
    // join); a start that fails says why.
    const base = await eventually(async () => /"url":"(http:\/\/[^"]+)","msg":"api listening"/.exec(output)?.[1], 120_000, 'the service to listen')
      .catch((error: Error) => { throw new Error(`${error.message}; its output: ${output.slice(-3000)}`); });
    assert.equal((await fetch(`${base}/healthz`)).status, 200);

    // A sign-up whose body is only half sent when the signal arrives: it is in flight for sure,
    // since the server cannot answer before the body is whole.
    const body = JSON.stringify({ email: uniqueEmail('shutdown'), password: TEST_PASSWORD, business_name: 'Draining Ltd', country_code: 'GB' });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(`${base}/v1/sandbox/accounts`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      request.on('error', reject);
      request.write(body.slice(0, 20));
      request.once('socket', (socket) => socket.once('connect', () => {
        child.kill('SIGTERM');
        // The rest of the body after the process began to drain.
        eventually(async () => (output.includes('shutting down') ? true : undefined), 10_000, 'the drain to begin')
          .then(() => request.end(body.slice(20)), reject);
      }));
    });
    const response = await answered;
    assert.equal(response.status, 201, response.text);
    assert.ok(JSON.parse(response.text).account.id, 'the request in flight was executed and answered');
    assert.equal(await exited, 0);
    assert.match(output, /"msg":"shutting down: draining in-flight work"/);
    assert.match(output, /"msg":"stopped"/);
    await assert.rejects(fetch(`${base}/healthz`));
  });
});
