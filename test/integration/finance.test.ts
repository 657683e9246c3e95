// The finance views (DESIGN.md section 5e) against a ledger that moved money in every way it
// can: account statements agree with the balance route, the trial balance nets to zero in every
// currency at every instant sampled while money moves, and the journal export holds every entry
// and posting, balanced, in JSON Lines and in CSV.
import assert from 'node:assert/strict';
import { testService } from '../hooks';
import { createKey, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { signUpGroup, violations, waitAllTerminal } from '../support/load';
import { expectedHoldings, linkGroup, mixedLoad, type Linked } from '../support/mixed-load';
import { balances, fund } from '../support/money';
import { Money, type Amount } from '../../ledger/money';
import { daysAfter, today } from '../support/days';

const GROUP_SIZE = 4;

async function text(path: string, token: string, accept: string): Promise<{ status: number; type: string; body: string }> {
  const response = await fetch(`${testService().baseUrl}${path}`, { headers: { authorization: `Bearer ${token}`, accept } });
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text() };
}

/** Splits a CSV text of simple fields and quoted ones into rows of fields. */
function csvRows(body: string): string[][] {
  return body.trim().split('\n').map((line) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(?:,|$)/g)].slice(0, -1).map((m) => m[1].replace(/^"|"$/g, '').replaceAll('""', '"')));
}

describe('finance: statements, trial balance and the journal', function () {
  this.timeout(180_000);
  const base = () => testService().baseUrl;
  const master = () => testService().config.masterKey;
  let group: Linked[];
  let started: string;

  before(async () => {
    started = new Date().toISOString();
    const members: SignedUp[] = await signUpGroup(base(), GROUP_SIZE);
    await Promise.all(members.flatMap((m) => [fund(base(), m.key, 'USD', '500.00'), fund(base(), m.key, 'EUR', '500.00')]));
    group = await linkGroup(base(), members);
  });

  it('gives each account a statement whose closing balance is the balance route\'s, after a randomized run, in JSON and CSV alike', async () => {
    const result = await mixedLoad(base(), group, 40, 6, 16);
    await waitAllTerminal(testService().runtime.db, result.transfers);
    await expectedHoldings(testService().runtime.db, group, {}); // waits for every payment to end
    for (const member of group) {
      const balance = await balances(base(), member.token);
      for (const currency of ['USD', 'EUR']) {
        const statement = await call(base(), 'GET', `/v1/accounts/me/statement?currency=${currency}&from=${encodeURIComponent(started)}`, undefined, { token: member.key });
        assert.equal(statement.status, 200, JSON.stringify(statement.body));
        const { opening_balance, closing_balance, lines } = statement.body;
        assert.equal(opening_balance, '0.00', 'nothing before the account existed');
        assert.equal(closing_balance, balance[currency]?.available ?? '0.00', `${currency} closing balance = the balance route's available`);
        const sum = lines.reduce((total: Amount, line: { amount: string }) => total.plus(line.amount), new Money(opening_balance));
        assert.equal(sum.toFixed(2), closing_balance, 'opening + lines = closing');
        assert.ok(lines.length > 0 && lines.every((l: { kind: string }) => ['transfer', 'payment', 'fx', 'faucet'].includes(l.kind)));
        assert.ok(lines.some((l: { kind: string }) => l.kind === 'faucet'));
        assert.equal(lines.at(-1).balance_after, closing_balance);
        assert.deepEqual(lines.map((l: { posted_at: string }) => l.posted_at), [...lines.map((l: { posted_at: string }) => l.posted_at)].sort(), 'oldest first');

        const csv = await text(`/v1/accounts/me/statement?currency=${currency}&from=${encodeURIComponent(started)}`, member.key, 'text/csv');
        assert.match(csv.type, /^text\/csv/);
        const rows = csvRows(csv.body);
        assert.deepEqual(rows[0], ['entry_id', 'posted_at', 'amount', 'balance_after', 'kind', 'reference_id', 'description']);
        assert.deepEqual(rows.slice(1).map((r) => [r[0], r[2], r[3]]), lines.map((l: { entry_id: string; amount: string; balance_after: string }) => [l.entry_id, l.amount, l.balance_after]));
      }
      // Split in two at an instant in the middle: the first half closes where the second opens.
      const { lines } = (await call(base(), 'GET', `/v1/accounts/me/statement?currency=USD&from=${encodeURIComponent(started)}`, undefined, { token: member.key })).body;
      const middle = lines[Math.floor(lines.length / 2)].posted_at;
      const first = (await call(base(), 'GET', `/v1/accounts/me/statement?currency=USD&from=${encodeURIComponent(started)}&to=${encodeURIComponent(middle)}`, undefined, { token: member.key })).body;
      const second = (await call(base(), 'GET', `/v1/accounts/me/statement?currency=USD&from=${encodeURIComponent(middle)}`, undefined, { token: member.token })).body;
      assert.equal(first.closing_balance, second.opening_balance);
      assert.equal(first.lines.length + second.lines.length, lines.length);
    }
    assert.deepEqual(await violations(testService().runtime.db), {});
  });

  it('nets the trial balance to zero in every currency at every instant sampled while money moves', async () => {
    const samples: any[] = [];
    let moving = true;
    const sampling = (async () => {
      while (moving) {
        const response = await call(base(), 'GET', '/v1/ledger/trial-balance', undefined, { token: master() });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        samples.push(response.body);
        // Paced: each sample sums every account of the worker's ledger, and the load must move meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const result = await mixedLoad(base(), group, 40, 6, 23);
    moving = false;
    await sampling;
    await waitAllTerminal(testService().runtime.db, result.transfers);
    await expectedHoldings(testService().runtime.db, group, {}); // waits for every payment to end
    assert.ok(samples.length >= 3, `sampled ${samples.length} times`);
    for (const sample of samples) {
      assert.ok(sample.totals.length >= 2);
      for (const total of sample.totals) {
        assert.ok(new Money(total.net).isZero(), `${total.currency} nets to ${total.net} at ${sample.at}`);
        assert.ok(new Money(total.debits).isEqualTo(total.credits));
      }
      for (const currency of new Set<string>(sample.accounts.map((a: { currency: string }) => a.currency))) {
        const net = sample.accounts.filter((a: { currency: string }) => a.currency === currency).reduce((t: Amount, a: { net: string }) => t.plus(a.net), new Money(0));
        assert.ok(net.isZero(), `the accounts of ${currency} sum to ${net.toFixed()}`);
      }
    }
    // At an instant before the group existed, its accounts are not in the trial balance.
    const before = await call(base(), 'GET', `/v1/ledger/trial-balance?at=${encodeURIComponent(new Date(Date.parse(started) - 1000).toISOString())}`, undefined, { token: master() });
    assert.ok(!before.body.accounts.some((a: { account_id: string | null }) => a.account_id === group[0].account.id));
    const now = await call(base(), 'GET', '/v1/ledger/trial-balance', undefined, { token: master() });
    const balance = await balances(base(), group[0].token);
    const own = now.body.accounts.find((a: { ledger_account: string }) => a.ledger_account === `acct:${group[0].account.id}:available:USD`);
    assert.equal(own.net, balance.USD.available, 'an account\'s net is its balance');
  });

  it('exports the journal between two instants as JSON Lines and as CSV, every entry balanced', async () => {
    const to = new Date().toISOString();
    const jsonl = await text(`/v1/ledger/journal?from=${encodeURIComponent(started)}&to=${encodeURIComponent(to)}`, master(), 'application/x-ndjson');
    assert.equal(jsonl.status, 200);
    assert.match(jsonl.type, /^application\/x-ndjson/);
    const entries = jsonl.body.trim().split('\n').map((line) => JSON.parse(line));
    const ids = new Set(group.map((m) => m.account.id));
    const { rows } = await testService().runtime.db.raw(
      'SELECT count(DISTINCT entry_id)::int AS entries FROM postings WHERE account_id = ANY(?::uuid[]) AND created_at >= ? AND created_at < ?', [[...ids], started, to]);
    assert.ok(entries.filter((e) => e.postings.some((p: { account_id: string | null }) => p.account_id && ids.has(p.account_id))).length === rows[0].entries, 'every entry of the group');
    for (const entry of entries) {
      assert.ok(entry.posted_at >= started && entry.posted_at < to);
      const sums = new Map<string, Amount>();
      for (const p of entry.postings) sums.set(p.currency, (sums.get(p.currency) ?? new Money(0)).plus(p.amount));
      assert.ok([...sums.values()].every((s) => s.isZero()), `entry ${entry.entry_id} balances`);
    }
    const csv = await text(`/v1/ledger/journal?from=${encodeURIComponent(started)}&to=${encodeURIComponent(to)}`, master(), 'text/csv');
    const csvBody = csvRows(csv.body);
    assert.equal(csvBody[0].join(','), 'entry_id,kind,posted_at,command_id,transfer_id,payment_id,fx_quote_id,posting_id,ledger_account,account_id,currency,amount,balance_after');
    assert.equal(csvBody.length - 1, entries.reduce((n, e) => n + e.postings.length, 0), 'one row per posting');
  });

  it('refuses what it must: other credentials, another account, bad periods', async () => {
    const [member] = group;
    const publishable = await createKey(base(), member.token, 'publishable');
    expectError(await call(base(), 'GET', '/v1/accounts/me/statement?currency=USD', undefined, { token: publishable.key }), 403, 'insufficient_scope');
    expectError(await call(base(), 'GET', '/v1/accounts/me/statement', undefined, { token: member.key }), 400, 'invalid_request', 'currency');
    expectError(await call(base(), 'GET', '/v1/accounts/me/statement?currency=XYZ', undefined, { token: member.key }), 400, 'invalid_request', 'currency');
    expectError(await call(base(), 'GET', `/v1/accounts/me/statement?currency=USD&from=${encodeURIComponent(new Date().toISOString())}&to=${encodeURIComponent(started)}`, undefined, { token: member.key }), 400, 'invalid_request', 'from');
    expectError(await call(base(), 'GET', `/v1/accounts/me/statement?currency=USD&account_id=${group[1].account.id}`, undefined, { token: member.key }), 403, 'cross_account_access_denied');
    const forOther = await call(base(), 'GET', `/v1/accounts/me/statement?currency=USD&account_id=${group[1].account.id}&from=${encodeURIComponent(started)}`, undefined, { token: master() });
    assert.equal(forOther.status, 200, 'the master key reads any account\'s statement');
    assert.equal(forOther.body.closing_balance, (await balances(base(), group[1].token)).USD.available);
    for (const path of ['/v1/ledger/trial-balance', '/v1/ledger/journal']) {
      expectError(await call(base(), 'GET', path, undefined, { token: member.key }), 403, 'insufficient_scope', undefined, path);
      expectError(await call(base(), 'GET', path, undefined, { token: member.token }), 403, 'insufficient_scope', undefined, path);
    }
    expectError(await call(base(), 'GET', '/v1/ledger/trial-balance?at=yesterday', undefined, { token: master() }), 400, 'invalid_request', 'at');
  });

  it('takes an instant (exact) or a calendar date (a whole UTC day: in to, that day included) for from and to, and says which forms it takes', async () => {
    const [member] = group;
    const day = today();
    const tomorrow = daysAfter(day, 1);
    const byDates = await call(base(), 'GET', `/v1/accounts/me/statement?currency=USD&from=${day}&to=${day}`, undefined, { token: member.key });
    assert.equal(byDates.status, 200, JSON.stringify(byDates.body));
    assert.deepEqual([byDates.body.from, byDates.body.to], [`${day}T00:00:00.000Z`, `${tomorrow}T00:00:00.000Z`], 'from=to=the day is that whole day');
    const byInstants = await call(base(), 'GET', `/v1/accounts/me/statement?currency=USD&from=${day}T00:00:00Z&to=${tomorrow}T00:00:00Z`, undefined, { token: member.key });
    assert.deepEqual(byInstants.body, byDates.body, 'the same statement');
    const refused = await call(base(), 'GET', '/v1/accounts/me/statement?currency=USD&from=today', undefined, { token: member.key });
    expectError(refused, 400, 'invalid_request', 'from');
    assert.match(refused.body.message, /a calendar date \(YYYY-MM-DD\) is a whole UTC day: in from the window starts at its 00:00 UTC, in to the window includes that day; an ISO 8601 instant is exact/);
    const trial = await call(base(), 'GET', `/v1/ledger/trial-balance?at=${tomorrow}`, undefined, { token: master() });
    assert.equal(trial.status, 200, JSON.stringify(trial.body));
  });
});
