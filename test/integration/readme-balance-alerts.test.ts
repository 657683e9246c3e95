// The README's "Balances in time and balance alerts" walk-through works as written: after the first
// session's steps (without its event stream), its shell block runs against the test's service: the
// alert, the transfer that crosses it and the one that does not, one event, and the balance now and
// at the instant taken before.
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

describe('the README\'s balances in time and balance alerts', function () {
  this.timeout(60_000);

  it('runs as written after the first session, each step answering what the README says', async () => {
    const text = fs.readFileSync(README, 'utf8');
    const me = ['/tmp/me.json', path.join(os.tmpdir(), `readme-me-${randomUUID()}.json`)];
    const script = `${block(text, '## A first session')}\n${block(text, '## Balances in time and balance alerts')}`
      .replace(/^B=.*$/m, `B=${testService().baseUrl}`)
      .replace(/^curl -sN .*&$/m, '') // the event stream: the first session's test follows it
      .replace(/^kill %1.*$/m, '')
      .replaceAll(me[0], me[1]);
    const shell = spawn('bash', ['-e', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    shell.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    shell.stderr!.on('data', (chunk: Buffer) => { errors += chunk.toString(); });
    const code = await new Promise<number | null>((resolve) => shell.once('exit', resolve));
    fs.rmSync(me[1], { force: true });
    assert.equal(code, 0, `the script ran to its end\noutput:\n${output}\nerrors:\n${errors}`);
    assert.equal(errors, '', 'no step printed an error');
    const json = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)).slice(5);
    const [alert, crossing, staying, events, now, then, totalsThen] = json;
    assert.deepEqual([alert.currency, alert.below, alert.above, alert.wallet_id], ['USD', '50.00', null, 'main'], 'the alert');
    assert.deepEqual([crossing.status, staying.status], ['completed', 'completed'], 'the two transfers');
    assert.equal(events.data.length, 1, 'one crossing, none while the balance stays under');
    const attributes = JSON.parse(events.data[0].data.attributes);
    assert.deepEqual([events.data[0].resource_id, attributes.balance_before, attributes.balance_after], [alert.id, '90.00', '45.00']);
    assert.deepEqual(now.balances, [{ currency: 'USD', available: '40.00', held: '0.00', pending: '0.00' }], 'the balance now');
    assert.deepEqual(then.balances, [{ currency: 'USD', available: '90.00', held: '0.00', pending: '0.00' }], 'the balance at $T');
    assert.equal(totalsThen.totals.find((t: { currency: string }) => t.currency === 'USD').available, '90.00', 'the totals at $T');
  });
});
