// payctl, the command-line tool (src/cli), run as its users run it: the launcher the package's
// bin names, as a child process, against the real service. Logging in keeps the credential in a
// 0600 file; listen forwards each event, signed as a webhook delivery that a stock Standard
// Webhooks library verifies, once each even across a restart of the service under it; logs tail
// shows requests made after it started; an API error says its code and exits 1. The wallets,
// holds, batches, alerts and scheduled-transfers commands call their routes with their fields as options.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { fund, transferReaches } from '../support/money';
import { startApi, stopApi } from '../support/api-process';

const ROOT = path.join(__dirname, '..', '..', '..');
const LAUNCHER = path.join(ROOT, 'scripts', 'payctl.js');

interface Run { code: number | null; stdout: string; stderr: string }

describe('payctl, the command-line tool', function () {
  this.timeout(300_000);
  const base = () => testService().baseUrl;
  let home: string;
  const running: ChildProcess[] = [];

  beforeEach(() => { home = fs.mkdtempSync(path.join(os.tmpdir(), 'payctl-')); });
  afterEach(() => {
    for (const child of running.splice(0)) child.kill('SIGTERM');
    fs.rmSync(home, { recursive: true, force: true });
  });

  const environment = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: home, ...extra };
    delete env.PAYCTL_API_KEY;
    delete env.PAYCTL_BASE_URL;
    return { ...env, ...extra };
  };

  /** Runs payctl to its end. */
  function payctl(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<Run> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [LAUNCHER, ...args], { env: environment(extra), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
      child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** Starts a payctl that runs until stopped (listen, logs tail); its output so far is `output()`. */
  function follow(args: string[], extra: NodeJS.ProcessEnv = {}): { output: () => string; child: ChildProcess } {
    const child = spawn(process.execPath, [LAUNCHER, ...args], { env: environment(extra), stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    return { output: () => output, child };
  }

  /** A local server that verifies each POST with the standardwebhooks library and keeps what it verified. */
  async function receiver(): Promise<{ url: string; events: Array<{ id: string; type: string }>; refused: number; secret: (s: string) => void; close: () => Promise<void> }> {
    let verifier: Webhook | null = null;
    const state = { events: [] as Array<{ id: string; type: string }>, refused: 0 };
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      req.on('end', () => {
        try {
          const event = verifier!.verify(body, req.headers as Record<string, string>) as { id: string; type: string };
          state.events.push({ id: event.id, type: event.type });
          res.writeHead(204).end();
        } catch {
          state.refused++;
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
      get events() { return state.events; },
      get refused() { return state.refused; },
      secret: (secret: string) => { verifier = new Webhook(secret.slice('whsec_'.length)); },
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  const loginWithSession = (account: SignedUp, baseUrl = base()) =>
    payctl(['login', '--email', account.email, '--base-url', baseUrl], { PAYCTL_PASSWORD: account.password });

  it('logs in with an API key into a 0600 file, calls the API as tables or JSON, and says an API error\'s code with exit status 1', async () => {
    const account = await signUp(base());
    const login = await payctl(['login', '--api-key', account.key, '--base-url', base()]);
    assert.equal(login.code, 0, login.stderr);
    const file = path.join(home, 'payctl', 'config.json');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'the credential file is readable by its owner alone');
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).profiles.default.apiKey, account.key);

    const me = await payctl(['get', '/v1/accounts/me', '--json']);
    assert.equal(me.code, 0, me.stderr);
    assert.equal(JSON.parse(me.stdout).email, account.email);

    const created = await payctl(['post', '/v1/contacts', '-d', 'name=Ada Lovelace', '-d', `email=ada-${randomUUID()}@example.com`, '-d', 'bank.country=DE', '-d', 'bank.bank_name=Bank',
      '-d', 'bank.account_number=DE89370400440532013000', '-d', 'bank.currency=EUR']);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /^Idempotency-Key: [0-9a-f-]{36}$/m, 'the key it added is printed');
    assert.match(created.stdout, /^name\s+Ada Lovelace$/m);
    const listed = await payctl(['get', '/v1/contacts']);
    assert.match(listed.stdout, /^ID\s+NAME\s+EMAIL/m, 'a list is a table');
    assert.match(listed.stdout, /Ada Lovelace/);

    const refused = await payctl(['post', '/v1/contacts', '-d', 'name=No Email']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Error 400 invalid_request: .*\(email\)/);

    const wrongKey = await payctl(['get', '/v1/transfers'], { PAYCTL_API_KEY: 'sk_sandbox_thisisnotakeyatallthisisnotakey' });
    assert.equal(wrongKey.code, 1);
    assert.match(wrongKey.stderr, /Error 401 invalid_api_key: the API key is not valid/);
    const wrongLogin = await payctl(['login', '--api-key', 'sk_sandbox_thisisnotakeyatallthisisnotakey', '--base-url', base()]);
    assert.equal(wrongLogin.code, 1);
    assert.match(wrongLogin.stderr, /invalid_api_key/);
    const nowhere = await payctl(['get', '/v1/transfers'], { PAYCTL_BASE_URL: 'http://127.0.0.1:9' });
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.stderr, /cannot reach http:\/\/127\.0\.0\.1:9 .*is the service running/);
  });

  it('schedules, lists, reads and cancels scheduled transfers, and says what is wrong with a repeat', async () => {
    const [account, friend] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), account.key, 'USD', '10.00');
    assert.equal((await payctl(['login', '--api-key', account.key, '--base-url', base()])).code, 0);
    const json = async (args: string[]) => {
      const run = await payctl([...args, '--json']);
      assert.equal(run.code, 0, `payctl ${args.join(' ')}: ${run.stderr}`);
      return JSON.parse(run.stdout);
    };
    assert.match((await payctl(['--help'])).stdout, /^\s+scheduled-transfers /m);
    const runAt = new Date(Date.now() + 3_600_000).toISOString();
    const key = randomUUID();
    const create = ['scheduled-transfers', 'create', '--to', friend.email, '--amount', '2.5', '--currency', 'USD', '--run-at', runAt, '--every', 'month', '--count', '3', '--note', 'rent', '--idempotency-key', key];
    const made = await json(create);
    assert.deepEqual([made.status, made.transfer, made.run_at, made.next_run_at, made.repeat], ['scheduled', { recipient_email: friend.email, amount: '2.50', currency: 'USD', note: 'rent' }, runAt, runAt, { every: 'month', count: 3 }]);
    assert.equal((await json(create)).id, made.id, 'the key repeats the request');
    assert.deepEqual((await json(['scheduled-transfers', 'list', '--status', 'scheduled'])).data.map((s: { id: string }) => s.id), [made.id]);
    assert.match((await payctl(['scheduled-transfers', 'list'])).stdout, /^ID\s+STATUS\s+RUN_AT\s+NEXT_RUN_AT/m, 'a list is a table');
    // Made after the lists: due in half a second, it may have run before a list that followed it.
    const soon = await json(['scheduled-transfers', 'create', '--to', friend.email, '--amount', '1.00', '--currency', 'USD', '--run-at', new Date(Date.now() + 500).toISOString()]);
    const ran = await eventually(async () => {
      const schedule = await json(['scheduled-transfers', 'get', soon.id]);
      return schedule.runs[0]?.status === 'created' ? schedule : undefined;
    }, 20_000, 'the run of the schedule due in half a second');
    assert.equal(ran.status, 'completed');
    const cancelled = await json(['scheduled-transfers', 'cancel', made.id]);
    assert.deepEqual([cancelled.status, cancelled.next_run_at], ['cancelled', null]);
    const late = await payctl(['scheduled-transfers', 'cancel', soon.id]);
    assert.equal(late.code, 1);
    assert.match(late.stderr, /Error 409 scheduled_transfer_completed: /);
    const half = await payctl(['scheduled-transfers', 'create', '--to', friend.email, '--amount', '1.00', '--currency', 'USD', '--run-at', runAt, '--every', 'day']);
    assert.equal(half.code, 1);
    assert.match(half.stderr, /give --every and --count together/);
    const past = await payctl(['scheduled-transfers', 'create', '--to', friend.email, '--amount', '1.00', '--currency', 'USD', '--run-at', '2020-01-01T00:00:00Z']);
    assert.match(past.stderr, /Error 400 invalid_request: .*\(run_at\)/);
  });

  /** Logs in with `account`'s key; `json` runs a command with --json, expecting exit status 0. */
  async function loggedIn(account: SignedUp): Promise<(args: string[]) => Promise<any>> {
    assert.equal((await payctl(['login', '--api-key', account.key, '--base-url', base()])).code, 0);
    return async (args: string[]) => {
      const run = await payctl([...args, '--json']);
      assert.equal(run.code, 0, `payctl ${args.join(' ')}: ${run.stderr}`);
      return JSON.parse(run.stdout);
    };
  }

  it('names the wallets, holds, transfer batches and balance alerts routes, with --help for each, and answers as the routes do', async () => {
    const [account, friend] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), account.key, 'USD', '100.00');
    const json = await loggedIn(account);
    const help = await payctl(['--help']);
    for (const group of ['transfers', 'wallets', 'holds', 'batches', 'alerts']) assert.match(help.stdout, new RegExp(`^\\s+${group} `, 'm'), `${group} in payctl --help`);
    const captureHelp = await payctl(['holds', 'capture', '--help']);
    assert.match(captureHelp.stdout, /--amount <amount>[\s\S]*--to <email>[\s\S]*--final[\s\S]*--idempotency-key <key>/);
    assert.match((await payctl(['holds', 'increment', '--help'])).stdout, /<hold_id>[\s\S]*--amount <amount>[\s\S]*--idempotency-key <key>/);

    const wallet = await json(['wallets', 'create', '--name', 'Savings', '--metadata', 'goal=bike']);
    assert.deepEqual([wallet.name, wallet.metadata], ['Savings', { goal: 'bike' }]);
    assert.equal((await json(['wallets', 'move', '--from', 'main', '--to', wallet.id, '--amount', '30.00', '--currency', 'USD'])).status, 'completed');
    assert.match((await payctl(['wallets', 'list'])).stdout, /^ID\s+NAME[\s\S]*Savings/m, 'a list is a table');
    assert.equal((await json(['wallets', 'entries', wallet.id, '--order', 'asc'])).data.length, 1);

    const holdKey = randomUUID();
    const holdArgs = ['holds', 'create', '--amount', '20.00', '--currency', 'USD', '--wallet', wallet.id, '--description', 'deposit', '--metadata', 'booking=B-12', '--idempotency-key', holdKey];
    const hold = await json(holdArgs);
    assert.deepEqual([hold.status, hold.amount, hold.wallet_id, hold.description, hold.metadata], ['active', '20.00', wallet.id, 'deposit', { booking: 'B-12' }]);
    assert.equal((await json(holdArgs)).id, hold.id, 'the key repeats the request');
    assert.deepEqual((await json(['wallets', 'balances', wallet.id])).balances, [{ currency: 'USD', available: '10.00', held: '20.00', pending: '0.00' }]);
    const raised = await json(['holds', 'increment', hold.id, '--amount', '5.00']);
    assert.deepEqual([raised.status, raised.amount], ['active', '25.00']);
    assert.deepEqual((await json(['wallets', 'balances', wallet.id])).balances, [{ currency: 'USD', available: '5.00', held: '25.00', pending: '0.00' }], 'raised from the wallet it holds from');
    const captured = await json(['holds', 'capture', hold.id, '--amount', '12.00', '--to', friend.email, '--final', '--note', 'table 12']);
    assert.deepEqual([captured.status, captured.captured_amount, captured.released_amount, captured.captures[0].recipient_email], ['captured', '12.00', '13.00', friend.email]);
    assert.match((await payctl(['holds', 'get', hold.id])).stdout, /^status\s+captured$/m);
    const voided = await payctl(['holds', 'void', hold.id]);
    assert.equal(voided.code, 1);
    assert.match(voided.stderr, /Error 409 hold_not_active: .*\(hold_id\)/);

    const batch = await json(['batches', 'create', '--pay', `${friend.email}:5.00:USD`, '--pay', `${friend.email}:2.50:USD`, '--atomic']);
    assert.deepEqual([batch.atomic, batch.status, batch.items.map((i: { status: string }) => i.status)], [true, 'completed', ['created', 'created']]);
    const first = batch.items[0].transfer_id;
    const reversal = await json(['transfers', 'reverse', first, '--amount', '1.00', '--reason', 'one too many', '--metadata', 'ticket=T-1=a']);
    assert.deepEqual([reversal.transfer_id, reversal.amount, reversal.status, reversal.reason, reversal.metadata], [first, '1.00', 'completed', 'one too many', { ticket: 'T-1=a' }]);
    const tooMuch = await payctl(['transfers', 'reverse', first, '--amount', '4.01']);
    assert.equal(tooMuch.code, 1);
    assert.match(tooMuch.stderr, /Error 422 reversal_exceeded: .*\(amount\)/);

    const alert = await json(['alerts', 'create', '--currency', 'USD', '--below', '10.00', '--wallet', wallet.id]);
    assert.deepEqual([alert.below, alert.above, alert.wallet_id], ['10.00', null, wallet.id]);
    assert.ok((await json(['alerts', 'list'])).data.some((a: { id: string }) => a.id === alert.id));
    assert.equal((await json(['alerts', 'get', alert.id])).currency, 'USD');
    assert.deepEqual(await json(['alerts', 'delete', alert.id]), { id: alert.id, deleted: true });
    const both = await payctl(['alerts', 'create', '--currency', 'USD', '--below', '1.00', '--above', '2.00']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /give exactly one of --below or --above/);

    // 100.00 - 30.00 moved - 7.50 paid by the batch + 1.00 reversed.
    assert.deepEqual((await json(['wallets', 'balances', 'main'])).balances, [{ currency: 'USD', available: '63.50', held: '0.00', pending: '0.00' }]);
    const notEmpty = await payctl(['wallets', 'close', wallet.id]);
    assert.match(notEmpty.stderr, /Error 409 wallet_not_empty/);
    await json(['wallets', 'move', '--from', wallet.id, '--to', 'main', '--amount', '18.00', '--currency', 'USD']);
    assert.notEqual((await json(['wallets', 'close', wallet.id])).closed_at, null);
    assert.notEqual((await json(['wallets', 'get', wallet.id])).closed_at, null);
  });

  it('lists holds and transfers by their filters, follows reversals and a partner\'s declined return, and makes a batch from a file, as the routes do @system', async () => {
    const [account, friend] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), account.key, 'USD', '100.00');
    const json = await loggedIn(account);
    const wallet = await json(['wallets', 'create', '--name', 'Savings']);
    await json(['wallets', 'move', '--from', 'main', '--to', wallet.id, '--amount', '30.00', '--currency', 'USD']);
    const hold = await json(['holds', 'create', '--amount', '20.00', '--currency', 'USD', '--wallet', wallet.id, '--metadata', 'booking=B-12']);
    const captured = await json(['holds', 'capture', hold.id, '--amount', '12.00', '--to', friend.email, '--final']);
    assert.ok((await json(['holds', 'list', '--status', 'captured', '--wallet', wallet.id])).data.some((h: { id: string }) => h.id === hold.id));
    const today = new Date().toISOString().slice(0, 10);
    const listed = (args: string[]) => json(['holds', 'list', '--wallet', wallet.id, ...args]).then((page) => page.data.map((h: { id: string }) => h.id));
    assert.deepEqual(await listed(['--from', hold.created_at, '--to', today, '--currency', 'USD']), [hold.id], 'the hold of its instant, day and currency');
    assert.deepEqual(await listed(['--currency', 'EUR']), [], 'no hold in EUR');
    assert.deepEqual(await listed(['--metadata', 'booking=B-12', '--currency', 'USD']), [hold.id], 'the hold of its metadata');
    assert.deepEqual(await listed(['--metadata', 'booking=B-12', '--metadata', 'table=7']), [], 'every pair must hold');

    const batch = await json(['batches', 'create', '--pay', `${friend.email}:5.00:USD`, '--pay', `${friend.email}:2.50:USD`, '--atomic']);
    // Transfers found again by recipient, and one reversed in part: 1.00 of the 5.00 comes back.
    const toFriend = (await json(['transfers', 'list', '--recipient-email', friend.email.toUpperCase(), '--currency', 'USD'])).data.map((t: { transfer_id: string }) => t.transfer_id);
    const paidFriend = [captured.captures[0].transfer_id, ...batch.items.map((i: { transfer_id: string }) => i.transfer_id)];
    assert.deepEqual(toFriend.slice().sort(), paidFriend.sort(), 'the capture\'s transfer and the batch\'s, no other');
    const first = batch.items[0].transfer_id;
    const reversal = await json(['transfers', 'reverse', first, '--amount', '1.00']);
    // A transfer with metadata (sent by the generic post), found again by it.
    const tagged = await json(['post', '/v1/transfers', '-d', `recipient_email=${friend.email}`, '-d', 'amount=0.50', '-d', 'currency=USD', '-d', 'metadata.order_id=A-17']);
    assert.deepEqual(tagged.metadata, { order_id: 'A-17' });
    assert.deepEqual((await json(['transfers', 'list', '--metadata', 'order_id=A-17'])).data.map((t: { transfer_id: string }) => t.transfer_id), [tagged.transfer_id]);
    assert.deepEqual((await json(['transfers', 'list', '--metadata', 'order_id=A-17', '--currency', 'EUR'])).data, []);
    const badPair = await payctl(['transfers', 'list', '--metadata', 'order_id']);
    assert.equal(badPair.code, 1);
    assert.match(badPair.stderr, /--metadata takes key=value/);
    assert.deepEqual((await json(['transfers', 'reversals', first])).data.map((r: { id: string }) => r.id), [reversal.id]);
    assert.equal((await json(['transfers', 'get', first])).reversed_amount, '1.00');
    // A bank transfer is returned by its partner: the reversal prints pending and says how to follow it.
    const viban = friend.vibans.find((v) => v.currency === 'USD') as Record<string, string>;
    const bank = await call(base(), 'POST', '/v1/transfers', { recipient: { email: friend.email, name: 'Friend', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: 'USD' } }, amount: '3.00', currency: 'USD' },
      { token: account.key, idempotencyKey: randomUUID() });
    await transferReaches(base(), account.key, bank.body.transfer_id, 'completed', 30_000);
    const returning = await payctl(['transfers', 'reverse', bank.body.transfer_id, '--amount', '1.00', '--scenario', 'decline']);
    assert.equal(returning.code, 0, returning.stderr);
    assert.match(returning.stdout, /^status\s+pending$/m);
    assert.match(returning.stderr, /pending: the partner is asked to return it; payctl transfers reversals /);
    await eventually(async () => (await json(['transfers', 'reversals', bank.body.transfer_id])).data[0]?.status === 'failed' || undefined, 30_000, 'the declined return fails');
    assert.match((await payctl(['transfers', 'reversals', bank.body.transfer_id])).stdout, /^ID\s+TRANSFER_ID[\s\S]*\s1\.00\s+USD\s+failed/m);
    assert.deepEqual((await json(['batches', 'get', batch.id])).items.map((i: { transfer_id: string }) => i.transfer_id), batch.items.map((i: { transfer_id: string }) => i.transfer_id));
    const file = path.join(home, 'batch.json');
    fs.writeFileSync(file, JSON.stringify([{ recipient_email: friend.email, amount: '1.00', currency: 'USD', note: 'from a file' }]));
    assert.equal((await json(['batches', 'create', '--file', file])).status, 'completed');
    const empty = await payctl(['batches', 'create']);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /give the batch's transfers/);
    // 100.00 - 30.00 to the wallet - 7.50 by the batch + 1.00 reversed - 0.50 tagged - 3.00 to the bank (its return declined) - 1.00 by the file.
    assert.deepEqual((await json(['wallets', 'balances', 'main'])).balances, [{ currency: 'USD', available: '59.00', held: '0.00', pending: '0.00' }]);
  });

  it('forwards a triggered event to a local server, signed so a stock Standard Webhooks library verifies it', async () => {
    const account = await signUp(base());
    assert.equal((await loginWithSession(account)).code, 0);
    const local = await receiver();
    try {
      const listening = follow(['listen', '--forward-to', local.url]);
      const ready = await eventually(async () => /Ready! .* signing secret is (whsec_\S+)/.exec(listening.output())?.[1], 30_000, 'listen to be ready');
      local.secret(ready);
      const triggered = await payctl(['trigger', 'transfer.completed']);
      assert.equal(triggered.code, 0, triggered.stderr);
      assert.match(triggered.stdout, /Triggered transfer\.completed: transfer [0-9a-f-]{36} to .*: completed/);
      await eventually(async () => (local.events.some((e) => e.type === 'transfer.completed') ? true : undefined), 20_000, 'the event at the local server');
      assert.equal(local.refused, 0, 'every forwarded event verified');
      assert.ok(local.events.some((e) => e.type === 'balance.updated'), 'the faucet credit came first');
      await eventually(async () => (/transfer\.completed\s+[0-9a-f-]{36}\s+-> 204/.test(listening.output()) ? true : undefined), 5_000, 'listen to print the delivery');
    } finally {
      await local.close();
    }
    const filtered = await payctl(['trigger', 'nonsense.event']);
    assert.equal(filtered.code, 1);
    assert.match(filtered.stderr, /cannot trigger "nonsense\.event"; payctl trigger --list/);
  });

  it('says what to do when listen has an API key and no session', async () => {
    const account = await signUp(base());
    await payctl(['login', '--api-key', account.key, '--base-url', base()]);
    const refused = await payctl(['listen', '--forward-to', 'http://127.0.0.1:9/hooks']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /listen follows the event stream, which takes a session, not an API key: run payctl login --email/);
  });

  it('tails the request logs made after it started, filtered by status', async () => {
    const account = await signUp(base());
    await payctl(['login', '--api-key', account.key, '--base-url', base()]);
    const tail = follow(['logs', 'tail', '--status', '4xx']);
    await eventually(async () => (tail.output().includes('Tailing request logs') ? true : undefined), 20_000, 'the tail to start');
    const missing = `/v1/transfers/${randomUUID()}`;
    await payctl(['get', missing]);
    await payctl(['get', '/v1/transfers']);
    await eventually(async () => (tail.output().includes(missing) ? true : undefined), 20_000, 'the failed request in the tail');
    assert.match(tail.output(), new RegExp(`404  GET    ${missing}`));
    assert.doesNotMatch(tail.output(), / 200  GET    \/v1\/transfers /, 'the status filter leaves out a 200');
  });

  it('takes no password on the command line, only from PAYCTL_PASSWORD or the prompt (issue 38)', async () => {
    const account = await signUp(base());
    const refused = await payctl(['login', '--email', account.email, '--password', account.password, '--base-url', base()]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /does not take a password on the command line .*PAYCTL_PASSWORD/);
    assert.equal(fs.existsSync(path.join(home, 'payctl', 'config.json')), false, 'nothing saved');
    // No terminal to ask and no PAYCTL_PASSWORD: it says how.
    const noTerminal = await payctl(['login', '--email', account.email, '--base-url', base()]);
    assert.equal(noTerminal.code, 1);
    assert.match(noTerminal.stderr, /PAYCTL_PASSWORD/);
    const login = await loginWithSession(account);
    assert.equal(login.code, 0, login.stderr);
    assert.doesNotMatch((await payctl(['login', '--help'])).stdout, /--password/);
  });

  it('refuses plain-HTTP base URLs other than this machine (issue 38)', async () => {
    const account = await signUp(base());
    for (const address of ['http://payments.example.com', 'http://10.0.0.7:3000', 'http://127.0.0.1.example.com:3000', 'ftp://127.0.0.1']) {
      const login = await payctl(['login', '--api-key', account.key, '--base-url', address]);
      assert.equal(login.code, 1, address);
      assert.match(login.stderr, /only over HTTPS, or plain HTTP to this machine|is not a URL/, address);
      const call = await payctl(['get', '/v1/transfers'], { PAYCTL_API_KEY: account.key, PAYCTL_BASE_URL: address });
      assert.equal(call.code, 1, address);
      assert.match(call.stderr, /only over HTTPS, or plain HTTP to this machine/, address);
    }
    for (const address of [base(), base().replace('127.0.0.1', 'localhost')]) {
      assert.equal((await payctl(['get', '/v1/transfers'], { PAYCTL_API_KEY: account.key, PAYCTL_BASE_URL: address })).code, 0, address);
    }
  });

  it('listen follows no redirect with the session (issue 38)', async () => {
    const account = await signUp(base());
    assert.equal((await loginWithSession(account)).code, 0);
    let followed = 0;
    const elsewhere = http.createServer((_req, res) => { followed++; res.writeHead(200, { 'content-type': 'text/event-stream' }).end(); });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/steal`;
    const redirecting = http.createServer((_req, res) => res.writeHead(302, { location: target }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      // Followed (killed after the test if it never ends): a listen that took the redirect would reconnect there forever.
      const listening = follow(['listen', '--forward-to', 'http://127.0.0.1:9/hooks'], { PAYCTL_BASE_URL: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}` });
      const code = await eventually(async () => listening.child.exitCode ?? undefined, 20_000, 'listen to stop').catch(() => null);
      assert.equal(followed, 0, 'the session was not taken to the redirect\'s address');
      assert.equal(code, 1, listening.output());
      assert.match(listening.output(), /answered 302 .*does not follow redirects/);
    } finally {
      await new Promise((resolve) => redirecting.close(resolve));
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it('loses no event when the service restarts under listen: it resumes with Last-Event-ID and forwards each event once @system', async () => {
    const account = await signUp(base());
    // A service of its own (the API alone, the suite's service runs the ledger) on a port it keeps across its restart.
    let api = await startApi('0');
    const port = new URL(api.url).port;
    assert.equal((await loginWithSession(account, api.url)).code, 0);
    const local = await receiver();
    try {
      const listening = follow(['listen', '--forward-to', local.url]);
      local.secret(await eventually(async () => /signing secret is (whsec_\S+)/.exec(listening.output())?.[1], 30_000, 'listen to be ready'));
      const triggerHere = () => payctl(['trigger', 'balance.updated'], { PAYCTL_BASE_URL: base() });
      await triggerHere();
      await eventually(async () => (local.events.length >= 1 ? true : undefined), 20_000, 'the first event');

      await stopApi(api);
      await eventually(async () => (listening.output().includes('stream dropped') ? true : undefined), 20_000, 'listen to notice');
      for (let i = 0; i < 3; i++) assert.equal((await triggerHere()).code, 0, 'events made while listen has no stream');
      api = await startApi(port);

      const stored = async () => (await testService().runtime.db('account_events').where('account_id', account.account.id).select('id')).map((r) => r.id as string);
      await eventually(async () => {
        const all = await stored();
        return all.length >= 4 && all.every((id) => local.events.some((e) => e.id === id)) ? true : undefined;
      }, 45_000, 'every event of the account at the local server');
      const ids = local.events.map((e) => e.id);
      assert.equal(new Set(ids).size, ids.length, 'each event forwarded once');
      assert.deepEqual(ids.sort(), (await stored()).sort(), 'no event lost, none of another account');
      assert.equal(local.refused, 0);
    } finally {
      await local.close();
      await stopApi(api);
    }
  });
});
