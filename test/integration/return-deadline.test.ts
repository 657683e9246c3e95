// The deadline of a pending return (consumers/partners/return-deadline.ts), driven directly with a
// long deadline against the test service's mock rails. A return whose instruction never runs (its
// claim already taken, as by an instruction lost after its claim) stays pending with the payee's
// part held; past the deadline the partner is asked what it holds under the reversal's id:
//   none        → failed (`execution_deadline`), the part back with the payee
//   the return  → followed by a new instruction to `completed`, never failed
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ReturnDeadline } from '../../consumers/partners/return-deadline';
import { derivedUuid, idempotentCommandId } from '../../src/idempotency/derived-ids';
import { PartnerClient } from '../../src/partners/client';
import { railsUrl, testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { balances, fund, transferReaches } from '../support/money';

/** Past this, a return is overdue here: far longer than any test runs, so only the returns this file backdates are. */
const DEADLINE_MS = 30 * 60_000;
const LONG_AGO = () => new Date(Date.now() - 2 * DEADLINE_MS);

describe('the deadline of a pending return', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  const db = () => testService().runtime.db;
  const fiat = () => {
    const { config } = testService();
    return new PartnerClient({ baseUrl: `${railsUrl()}/fiat`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret, timeoutMs: 1_000, attemptsMax: 1, backoffMsMax: 100 });
  };
  const checker = () => new ReturnDeadline(testService().runtime, new Map([['fiat', fiat()]]), { deadlineMs: DEADLINE_MS });
  afterEach(async () => assert.deepEqual(await violations(db()), {}, 'the ledger invariants hold'));

  /**
   * A bank transfer of 20.00 returned in part whose instruction never runs: its claim is taken before
   * the ledger decides the reversal (the dispatcher drops the instruction as a copy of one already
   * run), then the reversal and its claim are dated past the deadline.
   */
  async function lostReturn(): Promise<{ sender: SignedUp; payee: SignedUp; transfer: any; reversalId: string }> {
    const [sender, payee] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), sender.key, 'USD', '100.00');
    const viban = payee.vibans.find((v) => v.currency === 'USD')! as Record<string, string>;
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient: { email: payee.email, name: 'Payee', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: 'USD' } }, amount: '20.00', currency: 'USD' },
      { token: sender.key, idempotencyKey: randomUUID() });
    const transfer = await transferReaches(base(), sender.key, sent.body.transfer_id, 'completed', 30_000);
    const key = randomUUID();
    const reversalId = derivedUuid('transfer-reversal', idempotentCommandId(sender.account.id, key));
    await db()('partner_instructions').insert({ transfer_id: `return:${reversalId}`, attempt: 0, source: 'lost', claimed_at: LONG_AGO() });
    const asked = await call(base(), 'POST', `/v1/transfers/${transfer.transfer_id}/reversals`, { amount: '8.00' }, { token: sender.key, idempotencyKey: key });
    assert.deepEqual([asked.status, asked.body.id, asked.body.status], [201, reversalId, 'pending'], JSON.stringify(asked.body));
    await db().raw(`UPDATE transfers SET reversals = jsonb_set(reversals, '{0,created_at}', to_jsonb(?::text)) WHERE id = ?`, [LONG_AGO().toISOString(), transfer.transfer_id]);
    const held = await balances(base(), payee.token);
    assert.deepEqual([held.USD.available, held.USD.pending], ['12.00', '8.00'], 'the payee\'s part is held');
    return { sender, payee, transfer, reversalId };
  }

  const reversalOf = async (sender: SignedUp, transferId: string, status: string) => eventually(async () => {
    const listed = await call(base(), 'GET', `/v1/transfers/${transferId}/reversals`, undefined, { token: sender.key });
    return listed.body.data[0]?.status === status ? listed.body.data[0] : undefined;
  }, 30_000, `the return to be ${status}`);

  it('fails a return the partner confirms it never made (execution_deadline), giving the payee its part back', async () => {
    const { sender, payee, transfer, reversalId } = await lostReturn();
    assert.deepEqual(await checker().round(), { failed: 1, followed: 0, unreachable: 0 });
    const failed = await reversalOf(sender, transfer.transfer_id, 'failed');
    assert.equal(failed.failure.code, 'execution_deadline');
    const after = await balances(base(), payee.token);
    assert.deepEqual([after.USD.available, after.USD.pending], ['20.00', '0.00']);
    assert.equal(await fiat().findPaymentByReference(reversalId), null, 'nothing was returned');
    assert.deepEqual(await checker().round(), { failed: 0, followed: 0, unreachable: 0 }, 'a decided return is not checked again');
  });

  it('follows a return the partner did make to completed, never failing it', async () => {
    const { sender, payee, transfer, reversalId } = await lostReturn();
    const made = await fiat().submitReturn(transfer.partner_payment_id, { reference: reversalId, amount: '8.00', currency: 'USD' });
    assert.equal(made.status, 'completed');
    assert.deepEqual(await checker().round(), { failed: 0, followed: 1, unreachable: 0 });
    await reversalOf(sender, transfer.transfer_id, 'completed');
    const after = await Promise.all([balances(base(), sender.token), balances(base(), payee.token)]);
    assert.deepEqual(after.map((b) => [b.USD.available, b.USD.pending]), [['88.00', '0.00'], ['12.00', '0.00']]);
  });
});
