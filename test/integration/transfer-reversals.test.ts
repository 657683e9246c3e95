// Reversals of transfers between two accounts of this service (DESIGN.md section 5h): in full or in
// part, any number up to the transfer, each one ledger entry from the recipient's available back to
// the sender's; exactly once under a retried key and under reversals racing on one transfer (the
// ledger decides them one after the other, so their sum never passes the transfer); refused, and
// nothing moved, when the recipient no longer has the money, when more is asked than is left, and
// for another account's transfer. A seeded sequence of reversals is checked against a model of what
// is left. Transfers paid through a partner are returned by it: transfer-returns.test.ts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money } from '../../ledger/money';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { balances, fund, transfer } from '../support/money';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seededCases } from '../support/seeds';

const base = () => testService().baseUrl;
const reverse = (key: string, transferId: string, body: Record<string, unknown> = {}, idempotencyKey = randomUUID()) =>
  call(base(), 'POST', `/v1/transfers/${transferId}/reversals`, body, { token: key, idempotencyKey });
const available = async (who: SignedUp, currency = 'USD') => (await balances(base(), who.token))[currency]?.available ?? '0.00';

async function sent(from: SignedUp, to: SignedUp, amount: string): Promise<string> {
  const answer = await transfer(base(), from.key, { recipient_email: to.account.email, amount, currency: 'USD' });
  assert.equal(answer.status, 201, JSON.stringify(answer.body));
  assert.equal(answer.body.status, 'completed');
  return answer.body.transfer_id;
}

async function reversedEvents(accountId: string, transferId: string): Promise<Array<{ amount: string; reversal_id: string }>> {
  const rows = await testService().runtime.db('account_events').where('account_id', accountId).orderBy('account_seq').select('payload');
  return rows.map((r: { payload: any }) => r.payload).filter((p: any) => p.type === 'transfer.reversed' && p.resource_id === transferId)
    .map((p: any) => ({ amount: p.data.amount, reversal_id: JSON.parse(p.data.attributes).reversal_id }));
}

describe('transfer reversals', () => {
  let sender: SignedUp;
  let recipient: SignedUp;
  beforeEach(async () => {
    [sender, recipient] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), sender.key, 'USD', '100.00');
  });

  it('reverses in part and then the rest, each one entry back to the sender, announced once, and lists them', async () => {
    const id = await sent(sender, recipient, '10.00');
    const key = randomUUID();
    const first = await reverse(sender.key, id, { amount: '4.00', reason: 'sent too much' }, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.deepEqual({ ...first.body, id: undefined, created_at: undefined }, {
      id: undefined, transfer_id: id, amount: '4.00', currency: 'USD', status: 'completed', reason: 'sent too much', metadata: {}, created_at: undefined, payout: null, failure: null,
    });
    const again = await reverse(sender.key, id, { amount: '4.00', reason: 'sent too much' }, key);
    assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body], [200, 'true', first.body], 'the same key answers the same reversal');
    expectError(await reverse(sender.key, id, { amount: '5.00' }, key), 409, 'idempotency_conflict');
    assert.deepEqual([await available(sender), await available(recipient)], ['94.00', '6.00']);

    const rest = await reverse(sender.key, id);
    assert.equal(rest.status, 201, JSON.stringify(rest.body));
    assert.equal(rest.body.amount, '6.00', 'no amount: all that is left');
    expectError(await reverse(sender.key, id, { amount: '0.01' }), 422, 'reversal_exceeded', 'amount');
    assert.deepEqual([await available(sender), await available(recipient)], ['100.00', '0.00']);

    const read = await call(base(), 'GET', `/v1/transfers/${id}`, undefined, { token: sender.key });
    assert.equal(read.body.reversed_amount, '10.00');
    assert.equal(read.body.status, 'completed', 'a reversed transfer stays completed: its reversals say what came back');
    const listed = await call(base(), 'GET', `/v1/transfers/${id}/reversals`, undefined, { token: sender.key });
    assert.deepEqual(listed.body.data.map((r: any) => [r.id, r.amount]), [[first.body.id, '4.00'], [rest.body.id, '6.00']]);
    assert.deepEqual(await reversedEvents(sender.account.id, id), [{ amount: '4.00', reversal_id: first.body.id }, { amount: '6.00', reversal_id: rest.body.id }]);
    const { rows } = await testService().runtime.db.raw(
      `SELECT e.id, sum(p.amount)::text AS total, count(*)::int AS n FROM journal_entries e JOIN postings p ON p.entry_id = e.id WHERE e.transfer_id = ? AND e.kind = 'transfer_reversal' GROUP BY e.id`, [id]);
    assert.equal(rows.length, 2, 'one entry a reversal');
    for (const row of rows) assert.ok(new Money(row.total).isZero() && row.n === 2, JSON.stringify(row));
  });

  it('refuses what the recipient no longer has, another account, and a bad amount; nothing moves', async () => {
    const id = await sent(sender, recipient, '10.00');
    const third = await signUp(base());
    const spent = await transfer(base(), recipient.key, { recipient_email: third.account.email, amount: '7.00', currency: 'USD' });
    assert.equal(spent.status, 201, JSON.stringify(spent.body));
    expectError(await reverse(sender.key, id, { amount: '5.00' }), 422, 'insufficient_funds', 'amount');
    assert.equal((await reverse(sender.key, id, { amount: '3.00' })).status, 201, 'what it still has comes back');
    expectError(await reverse(third.key, id), 403, 'cross_account_access_denied');
    expectError(await reverse(recipient.key, id), 403, 'cross_account_access_denied', undefined, "the recipient cannot reverse the sender's transfer");
    expectError(await reverse(sender.key, randomUUID()), 404, 'transfer_not_found');
    assert.deepEqual([await available(sender), await available(recipient)], ['93.00', '0.00']);
    expectError(await reverse(sender.key, id, { amount: '0.001' }), 400, 'invalid_request', 'amount');
    expectError(await reverse(sender.key, id, { amount: '-1.00' }), 400, 'invalid_request', 'amount');
  });

  it('decides reversals racing on one transfer one after the other: their sum never passes it', async () => {
    const id = await sent(sender, recipient, '10.00');
    const answers = await Promise.all(Array.from({ length: 8 }, () => reverse(sender.key, id, { amount: '3.00' })));
    const made = answers.filter((a) => a.status === 201);
    for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 422, 'reversal_exceeded', 'amount');
    assert.equal(made.length, 3, answers.map((a) => a.status).join(','));
    assert.deepEqual([await available(sender), await available(recipient)], ['99.00', '1.00']);
    const read = await call(base(), 'GET', `/v1/transfers/${id}`, undefined, { token: sender.key });
    assert.equal(read.body.reversed_amount, '9.00');
  });

  for (const { seed, tag } of seededCases([3, 71])) {
    it(`follows a model of what is left through a seeded sequence of reversals (seed ${seed}, ${replayOf(seed)})${tag}`, () => namingSeed(seed, async () => {
      const random = prng(seed);
      const cents = 500 + Math.floor(random() * 2_000);
      const amount = new Money(cents).dividedBy(100);
      const id = await sent(sender, recipient, amount.toFixed(2));
      let left = amount;
      for (let step = 0; step < 8; step++) {
        const roll = random();
        const asked = roll < 0.2 ? null : new Money(1 + Math.floor(random() * cents * 0.6)).dividedBy(100);
        const answer = await reverse(sender.key, id, asked === null ? {} : { amount: asked.toFixed(2) });
        const wanted = asked ?? left;
        if (left.isZero() || wanted.isGreaterThan(left)) {
          expectError(answer, 422, 'reversal_exceeded', 'amount', `step ${step}: ${asked?.toFixed(2) ?? 'the rest'} of ${left.toFixed(2)}`);
          continue;
        }
        assert.equal(answer.status, 201, `step ${step}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.amount, wanted.toFixed(2));
        left = left.minus(wanted);
      }
      assert.equal(await available(recipient), left.toFixed(2));
      assert.equal(await available(sender), new Money(100).minus(left).toFixed(2));
    }));
  }
});
