// A capture of a hold on a wallet paid to bank details (README "Wallets and holds"): its amount
// waits in the main balance's pending while the rail executes it. When the payout ends without
// paying — the partner declines it, reverses it, or confirms at the execution deadline that it
// holds no payment — the amount goes back to the wallet it was held on, to the cent, with the
// wallet's balance.updated event; the main balance is as it was. A wallet closed in the meantime
// takes no money: the main balance takes it instead. A late completion takes the amount again
// from where it went back to.
//
// The partner's answers are sent to the ledger as the dispatcher and the deadline check send them
// (consumers/partners): the capture's instruction is claimed first, so the dispatcher leaves it
// alone and the answer under test is the only one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { resultCommand } from '../../consumers/partners/dispatcher';
import { ExecutingDeadline } from '../../consumers/partners/deadline';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import { Money } from '../../ledger/money';
import { derivedUuid, idempotentCommandId } from '../../src/idempotency/derived-ids';
import { TOPICS } from '../../src/kafka/topics';
import { PartnerClient } from '../../src/partners/client';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { fund, transferReaches } from '../support/money';

describe('a failed payout of a wallet hold\'s capture goes back to the wallet', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  /** Past this, a transfer is overdue here: far longer than the test runs, so only the transfers this file backdates are. */
  const DEADLINE_MS = 30 * 60_000;
  const LONG_AGO = () => new Date(Date.now() - 2 * DEADLINE_MS);
  let payer: SignedUp;
  let payee: SignedUp;
  before(async () => {
    [payer, payee] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), payer.key, 'USD', '200.00');
  });
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const minus = (a: string, b: string) => new Money(a).minus(b).toFixed(2);
  const post = (path: string, body?: unknown) => call(base(), 'POST', path, body, { token: payer.key, idempotencyKey: randomUUID() });
  const balancesOf = async (walletId: string) => {
    const response = await call(base(), 'GET', `/v1/wallets/${walletId}/balances`, undefined, { token: payer.key });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const { available, held, pending } = response.body.balances.find((b: { currency: string }) => b.currency === 'USD');
    return { available, held, pending };
  };
  const sendToLedger = async (envelope: LedgerCommandEnvelope) => {
    const { runtime } = testService();
    await runtime.producer.send({
      topic: runtime.names.full(TOPICS.ledgerCommands), acks: -1,
      messages: [{ key: envelope.account_id, value: await runtime.codec.encode(TOPICS.ledgerCommands, envelope) }],
    });
  };
  const bank = () => {
    const viban = payee.vibans.find((v) => v.currency === 'USD')!;
    return { email: payee.email, name: 'Payee', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency: 'USD' } };
  };

  /** A wallet holding `funded`, a hold of `held` on it, and `captured` of that paid to bank details: executing, its instruction claimed. */
  async function executingCapture(funded: string, held: string, captured: string): Promise<{ walletId: string; transferId: string }> {
    const walletId = (await post('/v1/wallets', { name: 'payouts' })).body.id;
    assert.equal((await post('/v1/wallet-transfers', { from_wallet_id: 'main', to_wallet_id: walletId, amount: funded, currency: 'USD' })).status, 201);
    const holdId = (await post('/v1/holds', { amount: held, currency: 'USD', wallet_id: walletId })).body.id;
    const key = randomUUID();
    const transferId = derivedUuid('transfer', idempotentCommandId(payer.account.id, key));
    await testService().runtime.db('partner_instructions').insert({ transfer_id: transferId, attempt: 0, source: 'lost', claimed_at: new Date() });
    const capture = await call(base(), 'POST', `/v1/holds/${holdId}/capture`, { amount: captured, recipient: bank() }, { token: payer.key, idempotencyKey: key });
    assert.equal(capture.status, 200, JSON.stringify(capture.body));
    assert.equal(capture.body.captures[0].transfer_id, transferId);
    assert.equal((await call(base(), 'GET', `/v1/transfers/${transferId}`, undefined, { token: payer.key })).body.status, 'executing');
    return { walletId, transferId };
  }

  const answer = (transferId: string, outcome: TransferPartnerResult['outcome'], failureCode: string | null): LedgerCommandEnvelope =>
    resultCommand(payer.account.id, { transfer_id: transferId, outcome, partner_payment_id: null, failure_code: failureCode, failure_message: null });

  /** The wallet's balance.updated events, as the account's event stream carries them. */
  async function walletEvents(walletId: string): Promise<Array<Record<string, string>>> {
    const rows = await testService().runtime.db('account_events').where('account_id', payer.account.id).orderBy('account_seq').select('payload');
    return rows.map((r) => r.payload).filter((p) => p.type === 'balance.updated' && p.data.attributes !== null)
      .map((p) => JSON.parse(p.data.attributes)).filter((a) => a.wallet_id === walletId);
  }

  const ends: Array<[string, TransferPartnerResult['outcome'], string]> = [
    ['the partner declines it', 'failed', 'partner_declined'],
    ['the partner reverses it', 'rolled_back', 'partner_reversed'],
  ];
  for (const [when, outcome, failureCode] of ends) {
    it(`${when}: ${outcome}, the amount back in the wallet, the main balance as it was`, async () => {
      const mainBefore = await balancesOf('main');
      const { walletId, transferId } = await executingCapture('40.00', '30.00', '12.00');
      assert.deepEqual(await balancesOf(walletId), { available: '10.00', held: '18.00', pending: '0.00' });
      assert.deepEqual(await balancesOf('main'), { ...mainBefore, available: minus(mainBefore.available, '40.00'), pending: '12.00' }, 'the payout waits in pending');

      await sendToLedger(answer(transferId, outcome, failureCode));
      const ended = await transferReaches(base(), payer.key, transferId, outcome);
      assert.equal(ended.failure.code, failureCode);
      assert.deepEqual(await balancesOf(walletId), { available: '22.00', held: '18.00', pending: '0.00' }, 'the 12.00 is back where it was held');
      assert.deepEqual(await balancesOf('main'), { ...mainBefore, available: minus(mainBefore.available, '40.00') }, 'the main balance took none of it');
      const events = await eventually(async () => { const e = await walletEvents(walletId); return e.some((a) => a.available === '22.00') ? e : undefined; }, 10_000, 'the wallet\'s balance event');
      assert.deepEqual(events.at(-1), { wallet_id: walletId, available: '22.00', held: '18.00', pending: '0.00' });
    });
  }

  it('the partner confirms at the execution deadline that it holds no payment: failed, the amount back in the wallet', async () => {
    const { config, runtime } = testService();
    const { walletId, transferId } = await executingCapture('25.00', '25.00', '25.00');
    assert.deepEqual(await balancesOf(walletId), { available: '0.00', held: '0.00', pending: '0.00' });
    await runtime.db('transfers').where('id', transferId).update({ updated_at: LONG_AGO() });
    await runtime.db('partner_instructions').where('transfer_id', transferId).update({ claimed_at: LONG_AGO() });
    const railsUrl = testService().roles.find((r) => r.role === 'mock-rails')!.url!;
    const fiat = new PartnerClient({ baseUrl: `${railsUrl}/fiat`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret, timeoutMs: 1_000, attemptsMax: 1, backoffMsMax: 100 });
    const deadline = new ExecutingDeadline(runtime, new Map([['fiat', fiat]]), { deadlineMs: DEADLINE_MS, intervalMs: 100 });
    assert.equal((await deadline.round()).failed, 1);
    const failed = await transferReaches(base(), payer.key, transferId, 'failed');
    assert.equal(failed.failure.code, 'execution_deadline');
    assert.deepEqual(await balancesOf(walletId), { available: '25.00', held: '0.00', pending: '0.00' });
  });

  it('a late completion takes the amount again from the wallet it went back to', async () => {
    const mainBefore = await balancesOf('main');
    const { walletId, transferId } = await executingCapture('10.00', '10.00', '7.50');
    await sendToLedger(answer(transferId, 'failed', 'partner_error'));
    await transferReaches(base(), payer.key, transferId, 'failed');
    assert.deepEqual(await balancesOf(walletId), { available: '7.50', held: '2.50', pending: '0.00' });
    await sendToLedger(answer(transferId, 'completed', null));
    const completed = await transferReaches(base(), payer.key, transferId, 'completed');
    assert.equal(completed.late_completion.receivable, '0.00');
    assert.deepEqual(await balancesOf(walletId), { available: '0.00', held: '2.50', pending: '0.00' });
    assert.deepEqual(await balancesOf('main'), { ...mainBefore, available: minus(mainBefore.available, '10.00') });
  });

  it('goes to the main balance instead when the wallet was closed in the meantime: a closed wallet takes no money', async () => {
    const mainBefore = await balancesOf('main');
    const { walletId, transferId } = await executingCapture('5.00', '5.00', '5.00');
    assert.equal((await post(`/v1/wallets/${walletId}/close`)).status, 200, 'nothing is left in it while the payout executes');
    await sendToLedger(answer(transferId, 'failed', 'partner_declined'));
    await transferReaches(base(), payer.key, transferId, 'failed');
    assert.deepEqual(await balancesOf(walletId), { available: '0.00', held: '0.00', pending: '0.00' });
    assert.deepEqual(await balancesOf('main'), mainBefore, 'the 5.00 came back to the main balance');
  });
});

