// Reversals of transfers paid through a partner, to bank details or a chain address (DESIGN.md
// section 5h): each is a return the partner makes. The reversal is answered `pending` with the
// recipient's part held (its available to its pending, in the payout currency), the partner is
// asked, and its answer completes it (the sender credited in the currency it sent, a conversion at
// the transfer's own rate, its legs in proportion) or fails it (the part back with the recipient).
// Each answer counts once however often it comes, and an answer after the failure changes nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { DomainEventEnvelope, LedgerCommandEnvelope } from '../../ledger/messages';
import { Money, type Amount } from '../../ledger/money';
import { cumulativePart } from '../../ledger/reversal-parts';
import { startConsumer } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import { startPartnerDispatcher } from '../../consumers/partners/runner';
import { railsUrl, testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually, type JsonResponse } from '../support/http';
import { violations } from '../support/load';
import { balances, fund, transferReaches } from '../support/money';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seededCases } from '../support/seeds';
import { openEventStream } from '../support/sse';
import { startReceiver } from '../support/webhook-receiver';
import { subscribe } from '../support/webhooks';

const base = () => testService().baseUrl;
const db = () => testService().runtime.db;

function reverse(key: string, transferId: string, body: Record<string, unknown> = {}, scenario?: string): Promise<JsonResponse> {
  return call(base(), 'POST', `/v1/transfers/${transferId}/reversals`, body, { token: key, idempotencyKey: randomUUID(), headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
}

/** Waits until the reversal reaches `status`, and returns it as GET /v1/transfers/{id}/reversals lists it. */
function reversalReaches(key: string, transferId: string, reversalId: string, status: string): Promise<any> {
  return eventually(async () => {
    const listed = await call(base(), 'GET', `/v1/transfers/${transferId}/reversals`, undefined, { token: key });
    const found = listed.body.data.find((r: { id: string }) => r.id === reversalId);
    return found?.status === status ? found : undefined;
  }, 30_000, `reversal ${reversalId} to reach ${status}`);
}

const bankOf = (who: SignedUp, currency: string) => {
  const viban = who.vibans.find((v) => v.currency === currency)! as Record<string, string>;
  return { email: who.email, name: 'Payee', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency } };
};

/** A completed transfer of `amount` `currency` to the payee's bank account in `payout` (the fiat rail). */
async function bankTransfer(from: SignedUp, to: SignedUp, amount: string, currency: string, payout = currency): Promise<any> {
  const sent = await call(base(), 'POST', '/v1/transfers', { recipient: bankOf(to, payout), amount, currency }, { token: from.key, idempotencyKey: randomUUID() });
  assert.equal(sent.status, 201, JSON.stringify(sent.body));
  return transferReaches(base(), from.key, sent.body.transfer_id, 'completed', 30_000);
}

const figures = async (who: SignedUp, currency: string) => {
  const total = (await balances(base(), who.token))[currency];
  return [total?.available ?? '0.00', total?.pending ?? '0.00'];
};

/** The transfer's entries, oldest first, each with its postings by ledger account code. */
async function journalOf(transferId: string): Promise<Array<{ id: string; kind: string; postings: Record<string, string> }>> {
  const rows: Array<{ id: string; kind: string; code: string; amount: string }> = await db()('journal_entries as e').join('postings as p', 'p.entry_id', 'e.id').join('ledger_accounts as la', 'la.id', 'p.ledger_account_id')
    .where('e.transfer_id', transferId).orderBy([{ column: 'e.created_at' }, { column: 'e.id' }]).select('e.id', 'e.kind', 'la.code', db().raw('p.amount::text AS amount'));
  const entries = new Map<string, { id: string; kind: string; postings: Record<string, string> }>();
  for (const row of rows) {
    const entry = entries.get(row.id) ?? { id: row.id, kind: row.kind, postings: {} };
    entry.postings[row.code] = new Money(row.amount).toFixed();
    entries.set(row.id, entry);
  }
  return [...entries.values()];
}

/** The code of an account's ledger account: `acct:<id>:<kind>:<currency>`. */
const acct = (who: SignedUp, kind: string, currency: string) => `acct:${who.account.id}:${kind}:${currency}`;

/** What the account's events of `type` on the transfer said: amount and reversal id. */
async function eventsOf(who: SignedUp, transferId: string, type: string): Promise<Array<{ amount: string; reversal_id: string; status: string }>> {
  const rows = await db()('account_events').where('account_id', who.account.id).orderBy('account_seq').select('payload');
  return rows.map((r: { payload: any }) => r.payload).filter((p: any) => p.type === type && p.resource_id === transferId)
    .map((p: any) => ({ amount: p.data.amount, status: p.data.status, reversal_id: JSON.parse(p.data.attributes).reversal_id }));
}

/** The returns the partner holds for a payment of its, by our reference. */
async function railReturns(paymentId: string): Promise<Array<{ reference: string; amount: string; status: string }>> {
  const { rows } = await db().raw(`SELECT reference, amount::text AS amount, status FROM mock_rails.payments WHERE returns = ? ORDER BY created_at`, [paymentId]);
  return rows;
}

async function sendToLedger(envelope: LedgerCommandEnvelope): Promise<void> {
  const { runtime } = testService();
  await runtime.producer.send({
    topic: runtime.names.full(TOPICS.ledgerCommands), acks: -1,
    messages: [{ key: envelope.account_id, value: await runtime.codec.encode(TOPICS.ledgerCommands, envelope) }],
  });
}

describe('transfer returns through the partner', function () {
  this.timeout(120_000);
  let sender: SignedUp;
  let payee: SignedUp;
  beforeEach(async () => {
    [sender, payee] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), sender.key, 'USD', '100.00');
  });
  afterEach(async () => assert.deepEqual(await violations(db()), {}, 'the ledger invariants hold'));

  it('returns a bank transfer in part, then the rest: pending, then completed; both balances and the journal to the cent', async () => {
    const sent = await bankTransfer(sender, payee, '40.00', 'USD');
    const part = await reverse(sender.key, sent.transfer_id, { amount: '15.00', reason: 'overpaid' });
    assert.equal(part.status, 201, JSON.stringify(part.body));
    assert.deepEqual({ ...part.body, id: undefined, created_at: undefined }, {
      id: undefined, created_at: undefined, transfer_id: sent.transfer_id, amount: '15.00', currency: 'USD', status: 'pending', reason: 'overpaid', metadata: {},
      payout: { amount: '15.00', currency: 'USD' }, failure: null,
    });
    await reversalReaches(sender.key, sent.transfer_id, part.body.id, 'completed');
    assert.deepEqual([await figures(sender, 'USD'), await figures(payee, 'USD')], [['75.00', '0.00'], ['25.00', '0.00']]);

    const rest = await reverse(sender.key, sent.transfer_id);
    assert.deepEqual([rest.status, rest.body.amount, rest.body.status], [201, '25.00', 'pending'], JSON.stringify(rest.body));
    expectError(await reverse(sender.key, sent.transfer_id, { amount: '0.01' }), 422, 'reversal_exceeded', 'amount', 'the pending reversal counts');
    await reversalReaches(sender.key, sent.transfer_id, rest.body.id, 'completed');
    assert.deepEqual([await figures(sender, 'USD'), await figures(payee, 'USD')], [['100.00', '0.00'], ['0.00', '0.00']]);
    const read = await call(base(), 'GET', `/v1/transfers/${sent.transfer_id}`, undefined, { token: sender.key });
    assert.deepEqual([read.body.status, read.body.reversed_amount], ['completed', '40.00']);

    const journal = await journalOf(sent.transfer_id);
    assert.deepEqual(journal.map((e) => e.kind), ['transfer_hold', 'transfer_settle', 'return_hold', 'return_settle', 'return_hold', 'return_settle']);
    const [, , hold1, settle1, hold2, settle2] = journal;
    assert.deepEqual(hold1.postings, { [acct(payee, 'available', 'USD')]: '-15', [acct(payee, 'pending', 'USD')]: '15' });
    assert.deepEqual(settle1.postings, { [acct(payee, 'pending', 'USD')]: '-15', [acct(sender, 'available', 'USD')]: '15' });
    assert.deepEqual(hold2.postings, { [acct(payee, 'available', 'USD')]: '-25', [acct(payee, 'pending', 'USD')]: '25' });
    assert.deepEqual([settle1.id, settle2.id], [part.body.id, rest.body.id], 'a return is settled in the entry named after its reversal');
    assert.deepEqual(await eventsOf(sender, sent.transfer_id, 'transfer.reversed'), [
      { amount: '15.00', status: 'completed', reversal_id: part.body.id }, { amount: '25.00', status: 'completed', reversal_id: rest.body.id }]);
    assert.deepEqual(await railReturns(sent.partner_payment_id), [
      { reference: part.body.id, amount: '15.00', status: 'completed' }, { reference: rest.body.id, amount: '25.00', status: 'completed' }]);
  });

  it('returns a conversion in parts at the transfer\'s own rate while the live rate has moved: the parts add up to the settlement\'s legs exactly', async () => {
    const sent = await bankTransfer(sender, payee, '77.77', 'USD', 'EUR');
    await eventually(async () => {
      const live = await call(base(), 'POST', '/v1/fx/quotes', { from_currency: 'USD', to_currency: 'EUR', from_amount: '77.77' });
      return live.body.rate !== sent.fx.rate ? live.body : undefined;
    }, 10_000, 'the live rate to move away from the transfer\'s');
    const amounts = ['10.01', '33.33', '34.43'];
    let cumulative = new Money(0);
    for (const amount of amounts) {
      const asked = await reverse(sender.key, sent.transfer_id, { amount });
      assert.equal(asked.status, 201, JSON.stringify(asked.body));
      const before = cumulative;
      cumulative = cumulative.plus(amount);
      const part = cumulativePart(new Money(sent.payout.amount), new Money('77.77'), cumulative, new Money(0), 'EUR')
        .minus(cumulativePart(new Money(sent.payout.amount), new Money('77.77'), before, new Money(0), 'EUR'));
      assert.deepEqual(asked.body.payout, { amount: part.toFixed(2), currency: 'EUR' }, `the payee's part of ${amount} USD, at the transfer's rate`);
      await reversalReaches(sender.key, sent.transfer_id, asked.body.id, 'completed');
    }
    assert.deepEqual([await figures(sender, 'USD'), await figures(payee, 'EUR')], [['100.00', '0.00'], ['0.00', '0.00']]);
    const journal = await journalOf(sent.transfer_id);
    const settle = journal.find((e) => e.kind === 'transfer_settle')!;
    const returned: Record<string, Amount> = {};
    for (const entry of journal.filter((e) => e.kind === 'return_settle')) {
      for (const [code, amount] of Object.entries(entry.postings)) returned[code] = (returned[code] ?? new Money(0)).plus(amount);
    }
    // The returns undo the settlement leg by leg: the desk's position and spread, the payee's part (from its pending) and the sender's amount (to its available).
    const undone = Object.fromEntries(Object.entries(settle.postings).map(([code, amount]) => [
      code.replace(`${payee.account.id}:available`, `${payee.account.id}:pending`).replace(`${sender.account.id}:pending`, `${sender.account.id}:available`), new Money(amount).negated().toFixed()]));
    assert.deepEqual(Object.fromEntries(Object.entries(returned).map(([code, amount]) => [code, amount.toFixed()])), undone);
    assert.ok(Object.keys(undone).some((code) => code.startsWith('sys:fx:spread:EUR')), 'the spread leg is given back too');
  });

  it('fails a return the partner declines: the part back with the payee, reversed_amount lowered, reversal.failed; the amount may be reversed again', async () => {
    const sent = await bankTransfer(sender, payee, '20.00', 'USD');
    const declined = await reverse(sender.key, sent.transfer_id, { amount: '8.00' }, 'decline');
    assert.deepEqual([declined.status, declined.body.status], [201, 'pending'], JSON.stringify(declined.body));
    const failed = await reversalReaches(sender.key, sent.transfer_id, declined.body.id, 'failed');
    assert.equal(failed.failure.code, 'partner_declined');
    assert.deepEqual([await figures(sender, 'USD'), await figures(payee, 'USD')], [['80.00', '0.00'], ['20.00', '0.00']]);
    const read = await call(base(), 'GET', `/v1/transfers/${sent.transfer_id}`, undefined, { token: sender.key });
    assert.equal(read.body.reversed_amount, '0.00');
    assert.deepEqual(await eventsOf(sender, sent.transfer_id, 'reversal.failed'), [{ amount: '8.00', status: 'failed', reversal_id: declined.body.id }]);
    assert.deepEqual(await eventsOf(sender, sent.transfer_id, 'transfer.reversed'), []);
    assert.deepEqual((await journalOf(sent.transfer_id)).map((e) => e.kind), ['transfer_hold', 'transfer_settle', 'return_hold', 'return_release']);

    const all = await reverse(sender.key, sent.transfer_id);
    assert.deepEqual([all.status, all.body.amount], [201, '20.00'], 'the failed reversal no longer counts');
    await reversalReaches(sender.key, sent.transfer_id, all.body.id, 'completed');
    assert.deepEqual([await figures(sender, 'USD'), await figures(payee, 'USD')], [['100.00', '0.00'], ['0.00', '0.00']]);
  });

  it('counts an answer once: a duplicate changes nothing, a late one after the failure changes nothing, a slow one completes once', async () => {
    const sent = await bankTransfer(sender, payee, '30.00', 'USD');
    const slow = await reverse(sender.key, sent.transfer_id, { amount: '5.00' }, 'slow_answer');
    assert.equal(slow.status, 201, JSON.stringify(slow.body));
    const done = await reversalReaches(sender.key, sent.transfer_id, slow.body.id, 'completed');
    const declined = await reverse(sender.key, sent.transfer_id, { amount: '7.00' }, 'decline');
    await reversalReaches(sender.key, sent.transfer_id, declined.body.id, 'failed');
    const railId = (await railReturns(sent.partner_payment_id))[0]?.reference;
    assert.equal(railId, slow.body.id, 'the slow return was made once, under its reversal');

    const answer = (reversalId: string, outcome: 'completed' | 'failed'): LedgerCommandEnvelope => ({
      id: `return_result:${reversalId}:${outcome}`, type: 'transfer.return_result', account_id: sender.account.id, reply_to: null, issued_at: new Date().toISOString(),
      payload: JSON.stringify({ transfer_id: sent.transfer_id, reversal_id: reversalId, outcome, partner_return_id: null, failure_code: outcome === 'failed' ? 'partner_declined' : null, failure_message: null }),
    });
    await sendToLedger(answer(slow.body.id, 'completed'));
    await sendToLedger(answer(slow.body.id, 'failed'));
    await sendToLedger(answer(declined.body.id, 'completed'));
    // A command of the sender's after them, on the same partition: once it is answered, they were decided.
    const after = await reverse(sender.key, sent.transfer_id, { amount: '1.00' });
    assert.equal(after.status, 201, JSON.stringify(after.body));
    await reversalReaches(sender.key, sent.transfer_id, after.body.id, 'completed');
    const listed = await call(base(), 'GET', `/v1/transfers/${sent.transfer_id}/reversals`, undefined, { token: sender.key });
    assert.deepEqual(listed.body.data.map((r: any) => [r.amount, r.status]), [['5.00', 'completed'], ['7.00', 'failed'], ['1.00', 'completed']]);
    assert.deepEqual(listed.body.data[0], done, 'the completed reversal is as it was');
    assert.deepEqual([await figures(sender, 'USD'), await figures(payee, 'USD')], [['76.00', '0.00'], ['24.00', '0.00']]);
    assert.equal((await eventsOf(sender, sent.transfer_id, 'transfer.reversed')).length, 2);
    assert.equal((await eventsOf(sender, sent.transfer_id, 'reversal.failed')).length, 1);
    assert.deepEqual((await journalOf(sent.transfer_id)).map((e) => e.kind).filter((k) => k.startsWith('return_')),
      ['return_hold', 'return_settle', 'return_hold', 'return_release', 'return_hold', 'return_settle']);
  });

  it('makes a return once when the partner dispatcher is killed while the partner is answering: the next dispatcher finds it by its reference @system', async () => {
    const service = testService();
    const index = service.roles.findIndex((role) => role.role === 'partners');
    const sent = await bankTransfer(sender, payee, '30.00', 'USD');
    await service.roles[index].stop();
    // A dispatcher of its own, killed once the partner made the return and before it answered (slow_answer).
    const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'src', 'main.js')], {
      env: { ...process.env, ROLES: 'partners', MOCK_RAILS_URL: railsUrl() }, stdio: 'ignore',
    });
    let restarted = false;
    try {
      const asked = await reverse(sender.key, sent.transfer_id, { amount: '12.00' }, 'slow_answer');
      assert.equal(asked.status, 201, JSON.stringify(asked.body));
      assert.equal(asked.body.status, 'pending');
      await eventually(async () => ((await railReturns(sent.partner_payment_id)).length === 1 ? true : undefined), 30_000, 'the partner made the return');
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      service.roles[index] = await startPartnerDispatcher(service.runtime, { railsUrl: railsUrl() });
      restarted = true;
      await reversalReaches(sender.key, sent.transfer_id, asked.body.id, 'completed');
      const made = await railReturns(sent.partner_payment_id);
      assert.deepEqual(made.map((r) => [r.reference, r.amount]), [[asked.body.id, '12.00']], 'one return at the partner, under its reversal');
      assert.deepEqual([await figures(sender, 'USD'), await figures(payee, 'USD')], [['82.00', '0.00'], ['18.00', '0.00']]);
      assert.equal((await eventsOf(sender, sent.transfer_id, 'transfer.reversed')).length, 1, 'announced once');
      assert.deepEqual((await journalOf(sent.transfer_id)).map((e) => e.kind).filter((k) => k.startsWith('return_')), ['return_hold', 'return_settle']);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      if (!restarted) service.roles[index] = await startPartnerDispatcher(service.runtime, { railsUrl: railsUrl() });
    }
  });

  it('announces a completed return as transfer.reversed and a failed one as reversal.failed: on the stream, to webhooks and on Kafka', async () => {
    const receiver = await startReceiver();
    try {
      await subscribe(sender, receiver.url, ['transfer.reversed', 'reversal.failed']);
      const stream = await openEventStream(base(), sender.token);
      const onKafka: DomainEventEnvelope[] = [];
      const reader = await startConsumer<DomainEventEnvelope>(testService().runtime, {
        groupId: `${testService().runtime.names.prefix}returns-events.${randomUUID()}`, topic: TOPICS.domainEvents, fromBeginning: true,
        handleBatch: async (messages) => { for (const { value } of messages) if (value.account_id === sender.account.id) onKafka.push(value); },
      });
      try {
        const sent = await bankTransfer(sender, payee, '12.00', 'USD');
        const failed = await reverse(sender.key, sent.transfer_id, { amount: '2.00', reason: 'try' }, 'decline');
        await reversalReaches(sender.key, sent.transfer_id, failed.body.id, 'failed');
        const completed = await reverse(sender.key, sent.transfer_id, { amount: '3.00' });
        await reversalReaches(sender.key, sent.transfer_id, completed.body.id, 'completed');
        const expected = [['reversal.failed', 'failed', '2.00', failed.body.id], ['transfer.reversed', 'completed', '3.00', completed.body.id]];
        const said = (type: string, data: { status: string; amount: string | null; attributes: string | null }) => [type, data.status, data.amount, JSON.parse(data.attributes!).reversal_id];
        const streamed: unknown[] = [];
        while (streamed.length < 2) {
          const frame = await stream.nextEvent(30_000);
          const envelope = JSON.parse(frame.data);
          if (frame.event === 'reversal.failed' || frame.event === 'transfer.reversed') streamed.push(said(frame.event, { ...envelope.data, attributes: JSON.stringify(envelope.data) }));
        }
        assert.deepEqual(streamed, expected, 'on the stream');
        const delivered = await receiver.waitFor(2, undefined, 30_000);
        assert.deepEqual(delivered.map((d) => said(d.event.type, { ...d.event.data, attributes: JSON.stringify(d.event.data) })), expected, 'to the webhook endpoint');
        const kafka = await eventually(async () => {
          const found = onKafka.filter((e) => e.type === 'reversal.failed' || e.type === 'transfer.reversed');
          return found.length >= 2 ? found : undefined;
        }, 30_000, 'the events on Kafka');
        assert.deepEqual(kafka.map((e) => said(e.type, e.data)), expected, 'on Kafka');
        assert.equal(JSON.parse(kafka[0].data.attributes!).failure_code, 'partner_declined');
      } finally {
        stream.close();
        await reader.disconnect();
      }
    } finally {
      await receiver.close();
    }
  });

  it('decides returns racing on one transfer one after the other: their sum never passes it, and the partner makes each once', async () => {
    const sent = await bankTransfer(sender, payee, '10.00', 'USD');
    const answers = await Promise.all(Array.from({ length: 8 }, () => reverse(sender.key, sent.transfer_id, { amount: '3.00' })));
    const made = answers.filter((a) => a.status === 201);
    for (const a of answers.filter((x) => x.status !== 201)) expectError(a, 422, 'reversal_exceeded', 'amount');
    assert.equal(made.length, 3, answers.map((a) => a.status).join(','));
    for (const a of made) await reversalReaches(sender.key, sent.transfer_id, a.body.id, 'completed');
    assert.deepEqual([await figures(sender, 'USD'), await figures(payee, 'USD')], [['99.00', '0.00'], ['1.00', '0.00']]);
    const returns = await railReturns(sent.partner_payment_id);
    assert.deepEqual(returns.map((r) => r.reference).sort(), made.map((a) => a.body.id).sort());
    assert.ok(returns.every((r) => r.amount === '3.00'));
  });

  it('refuses a return the payee cannot cover in the payout currency, and one of a transfer not completed; nothing moves', async () => {
    const sent = await bankTransfer(sender, payee, '10.00', 'USD', 'GBP');
    const third = await signUp(base());
    const spent = await call(base(), 'POST', '/v1/transfers', { recipient_email: third.email, amount: new Money(sent.payout.amount).minus('1.00').toFixed(2), currency: 'GBP' },
      { token: payee.key, idempotencyKey: randomUUID() });
    assert.equal(spent.status, 201, JSON.stringify(spent.body));
    expectError(await reverse(sender.key, sent.transfer_id), 422, 'insufficient_funds', 'amount');
    assert.deepEqual(await figures(payee, 'GBP'), ['1.00', '0.00']);
    const declined = await call(base(), 'POST', '/v1/transfers', { recipient: bankOf(payee, 'USD'), amount: '5.00', currency: 'USD' },
      { token: sender.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'decline' } });
    await transferReaches(base(), sender.key, declined.body.transfer_id, 'failed', 30_000);
    expectError(await reverse(sender.key, declined.body.transfer_id), 409, 'transfer_not_reversible', 'transfer_id');
  });

  it('returns an external item of a batch and a chain transfer through their partners, as any transfer', async () => {
    const batch = await call(base(), 'POST', '/v1/transfer-batches', { atomic: true, transfers: [{ recipient: bankOf(payee, 'USD'), amount: '6.00', currency: 'USD' }] },
      { token: sender.key, idempotencyKey: randomUUID() });
    assert.equal(batch.status, 201, JSON.stringify(batch.body));
    const item = await transferReaches(base(), sender.key, batch.body.items[0].transfer_id, 'completed', 30_000);
    const fromBatch = await reverse(sender.key, item.transfer_id, { amount: '2.50' });
    assert.deepEqual([fromBatch.status, fromBatch.body.status], [201, 'pending'], JSON.stringify(fromBatch.body));
    await reversalReaches(sender.key, item.transfer_id, fromBatch.body.id, 'completed');
    assert.deepEqual(await figures(sender, 'USD'), ['96.50', '0.00']);

    const [from, to] = await Promise.all([signUp(base(), { chain_wallet: true }), signUp(base(), { chain_wallet: true })]);
    await fund(base(), from.key, 'USDC', '50.000000');
    const chain = await call(base(), 'POST', '/v1/transfers', { recipient_email: to.email, amount: '20.000000', currency: 'USDC' }, { token: from.key, idempotencyKey: randomUUID() });
    assert.equal(chain.status, 201, JSON.stringify(chain.body));
    const paid = await transferReaches(base(), from.key, chain.body.transfer_id, 'completed', 30_000);
    const back = await reverse(from.key, paid.transfer_id, { amount: '7.123456' });
    assert.deepEqual([back.status, back.body.status, back.body.payout], [201, 'pending', { amount: '7.123456', currency: 'USDC' }], JSON.stringify(back.body));
    await reversalReaches(from.key, paid.transfer_id, back.body.id, 'completed');
    assert.deepEqual(await railReturns(paid.partner_payment_id), [{ reference: back.body.id, amount: '7.123456', status: 'completed' }]);
    const [usdc] = (await call(base(), 'GET', '/v1/wallets/main/balances', undefined, { token: to.key })).body.balances.filter((b: any) => b.currency === 'USDC');
    assert.equal(usdc.available, '12.876544');
  });

  for (const { seed, tag } of seededCases([5, 2027])) {
    it(`follows a model through a seeded sequence of returns of a conversion, some declined (seed ${seed}, ${replayOf(seed)})${tag}`, () => namingSeed(seed, async () => {
      const random = prng(seed);
      const pairs = [['USD', 'EUR'], ['USD', 'GBP'], ['USD', 'USD']] as const;
      const [currency, payout] = pairs[Math.floor(random() * pairs.length)];
      const amount = new Money(500 + Math.floor(random() * 9_000)).dividedBy(100);
      const sent = await bankTransfer(sender, payee, amount.toFixed(2), currency, payout);
      const total = new Money(sent.payout.amount);
      // The model: the live reversals' amounts and the payee's parts they took.
      let live = new Money(0);
      let taken = new Money(0);
      for (let step = 0; step < 6; step++) {
        const left = amount.minus(live);
        if (left.isZero()) break;
        const last = step === 5 || random() < 0.2;
        const asked = last ? left : Money.min(left, new Money(1 + Math.floor(random() * Number(left.times(100).toFixed(0)))).dividedBy(100));
        const decline = !last && random() < 0.3;
        const answer = await reverse(sender.key, sent.transfer_id, last ? {} : { amount: asked.toFixed(2) }, decline ? 'decline' : undefined);
        assert.equal(answer.status, 201, `step ${step}: ${JSON.stringify(answer.body)}`);
        const part = cumulativePart(total, amount, live.plus(asked), taken, payout);
        assert.deepEqual([answer.body.amount, answer.body.payout.amount], [asked.toFixed(2), part.toFixed(2)], `step ${step}`);
        const ended = await reversalReaches(sender.key, sent.transfer_id, answer.body.id, decline ? 'failed' : 'completed');
        assert.equal(ended.payout.amount, part.toFixed(2));
        if (!decline) {
          live = live.plus(asked);
          taken = taken.plus(part);
        }
      }
      const read = await call(base(), 'GET', `/v1/transfers/${sent.transfer_id}`, undefined, { token: sender.key });
      assert.equal(read.body.reversed_amount, live.toFixed(2));
      assert.deepEqual(await figures(sender, currency), [new Money(100).minus(amount).plus(live).toFixed(2), '0.00']);
      assert.deepEqual(await figures(payee, payout), [total.minus(taken).toFixed(2), '0.00']);
      if (live.isEqualTo(amount)) assert.equal(taken.toFixed(2), total.toFixed(2), 'a transfer returned in full gives back its whole payout');
    }));
  }
});
