// The README's "Wallets and holds" walk-through works as written: after the first session's
// steps (without its event stream), its shell block runs against the test's service and each
// step answers what the README says: the wallet, the money moved into it, the hold, its final
// capture, the refused void, the wallet emptied and closed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testService } from '../hooks';

const README = path.join(__dirname, '..', '..', '..', 'README.md');

/** The first sh block under `heading`. */
function block(text: string, heading: string): string {
  const match = /```sh\n([\s\S]*?)```/.exec(text.slice(text.indexOf(heading)));
  assert.ok(match, `the README has a sh block under ${heading}`);
  return match[1];
}

describe('the README\'s wallets and holds', function () {
  this.timeout(60_000);

  it('runs as written after the first session, each step answering what the README says', async () => {
    const text = fs.readFileSync(README, 'utf8');
    const files = ['me', 'wallet', 'hold'].map((name) => [`/tmp/${name}.json`, path.join(os.tmpdir(), `readme-${name}-${randomUUID()}.json`)]);
    let script = `${block(text, '## A first session')}\n${block(text, '## Wallets and holds')}`
      .replace(/^B=.*$/m, `B=${testService().baseUrl}`)
      .replace(/^curl -sN .*&$/m, '') // the event stream: the first session's test follows it
      .replace(/^kill %1.*$/m, '');
    for (const [from, to] of files) script = script.replaceAll(from, to);
    const shell = spawn('bash', ['-e', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    shell.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    shell.stderr!.on('data', (chunk: Buffer) => { errors += chunk.toString(); });
    const code = await new Promise<number | null>((resolve) => shell.once('exit', resolve));
    for (const [, file] of files) fs.rmSync(file, { force: true });
    assert.equal(code, 0, `the script ran to its end\noutput:\n${output}\nerrors:\n${errors}`);
    assert.equal(errors, '', 'no step printed an error');
    const json = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)).slice(5);
    const [wallet, moved, walletBalances, entries, hold, mainBalances, captured, refusedVoid, emptied, closed] = json;
    assert.deepEqual([wallet.name, wallet.status], ['Savings', 'open'], 'the wallet');
    assert.deepEqual([moved.status, moved.amount, moved.to_wallet_id], ['completed', '30.00', wallet.id], 'money moved into it');
    assert.deepEqual(walletBalances.balances, [{ currency: 'USD', available: '30.00', held: '0.00', pending: '0.00' }]);
    assert.deepEqual(entries.data.map((e: { amount: string }) => e.amount), ['30.00']);
    assert.deepEqual([hold.status, hold.amount], ['active', '20.00'], 'the hold');
    assert.deepEqual(mainBalances.balances, [{ currency: 'USD', available: '40.00', held: '20.00', pending: '0.00' }], '90.00 less 30.00 moved and 20.00 held');
    assert.deepEqual([captured.status, captured.captured_amount, captured.released_amount], ['captured', '12.00', '8.00'], 'the final capture');
    assert.equal(refusedVoid.error, 'hold_not_active', 'the void after it');
    assert.equal(emptied.status, 'completed');
    assert.equal(closed.status, 'closed', 'the wallet, closed');
  });
});
