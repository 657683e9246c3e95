// The README's "A first session" works as written: its shell block, pasted in order, runs against
// the service (the test's, in place of 127.0.0.1:3000) and every step answers what a newcomer
// expects: two accounts, test funds, a transfer completed at once, its events on the stream, the
// balance and the transactions it left.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testService } from '../hooks';
import { eventually } from '../support/http';

const README = path.join(__dirname, '..', '..', '..', 'README.md');

/** The first sh block under "## A first session". */
function firstSessionScript(): string {
  const text = fs.readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('## A first session'));
  const match = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(match, 'the README has the first session as a sh block');
  return match[1];
}

describe('the README\'s first session', function () {
  this.timeout(60_000);

  it('runs as written, each step answering what the README says', async () => {
    const script = firstSessionScript();
    assert.match(script, /^B=http:\/\/127\.0\.0\.1:3000$/m, 'the session names the service\'s address first');
    const saved = path.join(os.tmpdir(), `first-session-${randomUUID()}.json`);
    const streamed = path.join(os.tmpdir(), `first-session-stream-${randomUUID()}.txt`);
    // The test's service in place of the default address, a file of its own, the background
    // stream into a file of its own (on one terminal its lines may land inside another step's),
    // and the stream ended by the test once its events came (the README's last line ends it at once).
    const background = /^(curl -sN .*) &(.*)$/m;
    assert.match(script, background, 'the session follows the event stream in the background');
    const runnable = script
      .replace(/^B=.*$/m, `B=${testService().baseUrl}`)
      .replaceAll('/tmp/me.json', saved)
      .replace(background, `$1 > ${streamed} &$2`)
      .replace(/^kill %1.*$/m, 'wait');
    const stream = () => (fs.existsSync(streamed) ? fs.readFileSync(streamed, 'utf8') : '');
    const shell = spawn('bash', ['-e', '-c', runnable], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    shell.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    shell.stderr!.on('data', (chunk: Buffer) => { errors += chunk.toString(); });
    const exited = new Promise<number | null>((resolve) => shell.once('exit', resolve));
    try {
      await eventually(async () => (/event: transfer\.completed/.test(stream()) && /"totals"/.test(output) && /"has_more"/.test(output) ? true : undefined),
        30_000, 'every step of the session').catch((error: Error) => { throw new Error(`${error.message}\noutput:\n${output}\nstream:\n${stream()}\nerrors:\n${errors}`); });
    } finally {
      process.kill(-shell.pid!, 'SIGTERM'); // the shell and its background stream
      await exited;
      fs.rmSync(saved, { force: true });
    }
    const events = stream();
    fs.rmSync(streamed, { force: true });
    assert.equal(errors, '', 'no step printed an error');
    const json = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const [account, funds, transfer, balance, transactions] = json;
    assert.match(account.api_key.key, /^sk_sandbox_/, 'your account, with its secret key');
    assert.deepEqual([funds.amount, funds.balance.available], ['100.00', '100.00'], 'test funds');
    assert.deepEqual([transfer.status, transfer.amount, transfer.currency], ['completed', '10.00', 'USD'], 'the transfer to your friend');
    assert.equal(balance.totals.find((t: { currency: string }) => t.currency === 'USD').available, '90.00');
    assert.equal(transactions.data.length, 2, 'the credit and the transfer');
    assert.match(events, /event: balance\.updated/, 'the stream carried the balance change too');
  });
});
