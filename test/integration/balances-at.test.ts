// Balances at an instant (DESIGN.md section 5g, `?at=`): the account's and a wallet's balance
// routes answer the balance as it was, equal to the sum of the postings up to that instant,
// checked at random instants against a model of the history (live movements through the ledger,
// and 100,000 seeded pay-ins); an instant in the future, or not an instant, is 400 naming `at`.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money, type Amount } from '../../ledger/money';
import { testService } from '../hooks';
import { createCustomer, signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { fund } from '../support/money';
import { prng } from '../support/prng';
import { seedSettledPayIns } from '../support/seed-ledger';

const base = () => testService().baseUrl;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function mainAt(token: string, at: string): Promise<{ available: string; pending: string; held: string }> {
  const response = await call(base(), 'GET', `/v1/accounts/me/balance?at=${encodeURIComponent(at)}`, undefined, { token });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.breakdown.find((b: { currency: string }) => b.currency === 'USD') ?? { available: '0.00', pending: '0.00', held: '0.00' };
}

async function walletAt(key: string, walletId: string, at: string): Promise<{ available: string; held: string; pending: string }> {
  const response = await call(base(), 'GET', `/v1/wallets/${walletId}/balances?at=${encodeURIComponent(at)}`, undefined, { token: key });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.balances.find((b: { currency: string }) => b.currency === 'USD') ?? { available: '0.00', held: '0.00', pending: '0.00' };
}

/** The sum of the postings of the account's ledger accounts of `kind` up to `at`, from the journal itself. */
async function postingsSum(accountId: string, kind: string, at: string, walletId: string | null = null): Promise<string> {
  const { rows } = await testService().runtime.db.raw(
    `SELECT coalesce(sum(p.amount), 0)::numeric(38,2)::text AS total FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id
      WHERE la.account_id = ? AND la.kind = ? AND la.currency = 'USD' AND la.wallet_id IS NOT DISTINCT FROM ?::uuid AND p.created_at <= ?`,
    [accountId, kind, walletId, at],
  );
  return rows[0].total;
}

describe('balances at an instant', () => {
  let alice: SignedUp;
  before(async () => {
    alice = await signUp(base());
  });

  it('answers the main balance and a wallet\'s as they were at any instant of a live history, equal to the sum of the postings then', async () => {
    const wallet = await call(base(), 'POST', '/v1/wallets', { name: 'Then' }, { token: alice.key, idempotencyKey: randomUUID() });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    const walletId: string = wallet.body.id;
    // The model: after each movement, the instant and the balances it left.
    const model: Array<{ at: string; main: Amount; pocket: Amount; held: Amount }> = [{ at: new Date().toISOString(), main: new Money(0), pocket: new Money(0), held: new Money(0) }];
    let main = new Money(0); let pocket = new Money(0); let held = new Money(0);
    const random = prng(43);
    for (let step = 0; step < 12; step += 1) {
      const cents = 100 + Math.floor(random() * 900);
      const amount = new Money(cents).dividedBy(100);
      const choice = step < 2 ? 0 : Math.floor(random() * 3);
      if (choice === 0) {
        await fund(base(), alice.key, 'USD', amount.toFixed(2)); main = main.plus(amount);
      } else if (choice === 1 && main.isGreaterThanOrEqualTo(amount)) {
        const moved = await call(base(), 'POST', '/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: walletId, amount: amount.toFixed(2), currency: 'USD' }, { token: alice.key, idempotencyKey: randomUUID() });
        assert.equal(moved.status, 201, JSON.stringify(moved.body)); main = main.minus(amount); pocket = pocket.plus(amount);
      } else if (main.isGreaterThanOrEqualTo(amount)) {
        const hold = await call(base(), 'POST', '/v1/holds', { amount: amount.toFixed(2), currency: 'USD' }, { token: alice.key, idempotencyKey: randomUUID() });
        assert.equal(hold.status, 201, JSON.stringify(hold.body)); main = main.minus(amount); held = held.plus(amount);
      }
      await pause(5);
      model.push({ at: new Date().toISOString(), main, pocket, held });
      await pause(5);
    }
    for (const point of model) {
      const then = await mainAt(alice.token, point.at);
      assert.deepEqual([then.available, then.held, then.pending], [point.main.toFixed(2), point.held.toFixed(2), '0.00'], `main balance at ${point.at}`);
      assert.equal(then.available, await postingsSum(alice.account.id, 'available', point.at), `the sum of the postings at ${point.at}`);
      const inWallet = await walletAt(alice.key, walletId, point.at);
      assert.equal(inWallet.available, point.pocket.toFixed(2), `wallet at ${point.at}`);
      const viaMain = await walletAt(alice.key, 'main', point.at);
      assert.deepEqual([viaMain.available, viaMain.held], [point.main.toFixed(2), point.held.toFixed(2)], `"main" at ${point.at}`);
    }
    const before = await mainAt(alice.token, '2020-01-01T00:00:00Z');
    assert.deepEqual([before.available, before.held, before.pending], ['0.00', '0.00', '0.00'], 'before any posting');
  });

  it('refuses an instant in the future and a malformed one, naming at', async () => {
    const future = new Date(Date.now() + 60_000).toISOString();
    expectError(await call(base(), 'GET', `/v1/accounts/me/balance?at=${encodeURIComponent(future)}`, undefined, { token: alice.token }), 400, 'invalid_request', 'at');
    expectError(await call(base(), 'GET', `/v1/wallets/main/balances?at=${encodeURIComponent(future)}`, undefined, { token: alice.key }), 400, 'invalid_request', 'at');
    for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '2026-01-01']) {
      expectError(await call(base(), 'GET', `/v1/accounts/me/balance?at=${encodeURIComponent(bad)}`, undefined, { token: alice.token }), 400, 'invalid_request', 'at', bad);
      expectError(await call(base(), 'GET', `/v1/wallets/main/balances?at=${encodeURIComponent(bad)}`, undefined, { token: alice.key }), 400, 'invalid_request', 'at', bad);
    }
  });

  it('refuses a date or an instant outside the years 0001 to 9999 on every route that takes one, naming the field, never a 500', async () => {
    const master = testService().config.masterKey;
    // Year 0 is valid ISO 8601 but no date Postgres stores; an offset can carry year 1 into year 0.
    for (const bad of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '0000-12-31']) {
      const q = encodeURIComponent(bad);
      const asked: Array<[string, string, string]> = [
        [`/v1/accounts/me/balance?at=${q}`, alice.token, 'at'],
        [`/v1/wallets/main/balances?at=${q}`, alice.key, 'at'],
        [`/v1/ledger/trial-balance?at=${q}`, master, 'at'],
        [`/v1/ledger/journal?from=${q}&to=2026-01-01`, master, 'from'],
        [`/v1/accounts/me/statement?currency=USD&from=${q}&to=2026-01-01`, alice.token, 'from'],
        [`/v1/reconciliation-exceptions?from=${q}`, master, 'from'],
      ];
      for (const [path, token, field] of asked) {
        const answer = await call(base(), 'GET', path, undefined, { token });
        expectError(answer, 400, 'invalid_request', field, `${path} (${bad})`);
      }
    }
  });

  // 5,000 postings in npm test, 100,000 in the system suite.
  for (const [count, suite] of [[5_000, ''], [100_000, ' @system']] as const) it(`equals the model at random instants over ${count.toLocaleString('en')} postings of one account${suite}`, async function () {
    this.timeout(300_000);
    const owner = await signUp(base());
    const customer = await createCustomer(base(), owner.key);
    assert.equal(customer.status, 201, JSON.stringify(customer.body));
    const day = '2026-02-03';
    await seedSettledPayIns(testService().runtime.db, owner.account.id, customer.body.id, count, day, `at-${randomUUID()}`);
    // The seeded history as seed-ledger.ts writes it: the i-th pay-in of ((i % 10000) + 100) cents at day + i × 86000 / count seconds.
    const start = Date.parse(`${day}T00:00:00Z`);
    const atOf = (i: number) => start + (i * 86000 * 1000) / count;
    const prefix: Amount[] = [new Money(0)];
    for (let i = 1; i <= count; i += 1) prefix.push(prefix[i - 1].plus(new Money((i % 10000) + 100).dividedBy(100)));
    const random = prng(4343);
    for (let sample = 0; sample < 25; sample += 1) {
      const instant = start + Math.floor(random() * 86_400_000);
      let last = 0;
      while (last < count && Math.floor(atOf(last + 1)) <= instant) last += 1; // the postings times are stored to the microsecond: compare by ms floor
      const at = new Date(instant).toISOString();
      const then = await mainAt(owner.token, at);
      const expected = await postingsSum(owner.account.id, 'available', at);
      assert.equal(then.available, expected, `the sum of the postings at ${at}`);
      // Within a millisecond of a posting the model is ambiguous (the journal keeps microseconds): compare off the edges.
      if (Math.floor(atOf(last + 1)) !== instant) assert.equal(then.available, prefix[last].toFixed(2), `the model at ${at} (${last} pay-ins)`);
    }
  });
});
