// A transfer the partner paid after the ledger had failed it (README "The partner's truth decides
// a transfer"): the ledger completes it late, and finance is told. The round that completes it
// opens one `late_completion` exception in the reconciliation exceptions queue, naming the
// transfer, what was held again and what is owed; the partner's answer delivered again opens no
// second one; finance explains it, and neither adjusts nor pairs it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import type { TransferPartnerResult } from '../../ledger/commands/transfer-partner-result';
import { TOPICS } from '../../src/kafka/topics';
import { PartnerClient } from '../../src/partners/client';
import { resultCommand } from '../../consumers/partners/dispatcher';
import { railsUrl, testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { balances, fund, transfer, transferReaches } from '../support/money';

describe('a late completion is an exception for finance', function () {
  this.timeout(90_000);
  const base = () => testService().baseUrl;
  const master = () => testService().config.masterKey;
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  const bankOf = (who: SignedUp) => {
    const viban = who.vibans.find((v) => v.currency === 'USD')!;
    return { email: who.email, name: 'Bob', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency: 'USD' } };
  };
  const exceptionsOf = async (transferId: string) => {
    const listed = await call(base(), 'GET', '/v1/reconciliation-exceptions?partner=fiat&limit=200', undefined, { token: master() });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    return listed.body.data.filter((e: { transfer_id: string | null }) => e.transfer_id === transferId);
  };
  const sendToLedger = async (envelope: LedgerCommandEnvelope) => {
    const { runtime } = testService();
    await runtime.producer.send({
      topic: runtime.names.full(TOPICS.ledgerCommands), acks: -1,
      messages: [{ key: envelope.account_id, value: await runtime.codec.encode(TOPICS.ledgerCommands, envelope) }],
    });
  };

  it('opens one late_completion exception naming the transfer, the amount held again and the amount owed; finance explains it', async () => {
    const { runtime, config } = testService();
    const bob = await signUp(base());
    const gina = await signUp(base());
    await fund(base(), gina.key, 'USD', '100.00');
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient: bankOf(bob), amount: '10.13', currency: 'USD' },
      { token: gina.key, idempotencyKey: randomUUID(), headers: { 'Sandbox-Scenario': 'error' } });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const transferId: string = sent.body.transfer_id;
    await transferReaches(base(), gina.key, transferId, 'failed', 30_000);
    assert.deepEqual(await exceptionsOf(transferId), [], 'a failure alone is no exception');
    // The sender spends most of the released amount; then the partner turns out to have paid.
    await transfer(base(), gina.key, { recipient_email: bob.email, amount: '95.00', currency: 'USD' });
    const rail = new PartnerClient({ baseUrl: `${railsUrl()}/fiat`, clientId: config.partnerClientId, clientSecret: config.partnerClientSecret });
    const paid = await rail.submitPayment({ reference: transferId, amount: '10.13', currency: 'USD' });
    const completed: TransferPartnerResult = { transfer_id: transferId, outcome: 'completed', partner_payment_id: paid.id, failure_code: null, failure_message: null };
    await sendToLedger(resultCommand(gina.account.id, completed));
    await transferReaches(base(), gina.key, transferId, 'completed');
    assert.deepEqual([(await balances(base(), gina.token)).USD.available], ['0.00'], 'the 5.00 left held again, 5.13 owed');

    // The partner's answer delivered again, as the same command and as another one: nothing new.
    const again = { ...resultCommand(gina.account.id, completed), id: `partner_result:${transferId}:completed:${randomUUID()}` };
    await sendToLedger(resultCommand(gina.account.id, completed));
    await sendToLedger(again);
    await eventually(async () => (await runtime.db('processed_commands').where('command_id', again.id).first()) ?? undefined, 15_000, 'the ledger decides the copy');

    const found = await exceptionsOf(transferId);
    assert.equal(found.length, 1, 'opened once per transfer');
    const [exception] = found;
    const rehold = await runtime.db('journal_entries').where({ transfer_id: transferId, kind: 'transfer_rehold' }).first('id');
    assert.deepEqual(
      [exception.category, exception.partner, exception.currency, exception.reheld_amount, exception.receivable_amount, exception.reference, exception.ledger_entry_id, exception.reconciliation_id, exception.status],
      ['late_completion', 'fiat', 'USD', '5.00', '5.13', paid.id, rehold.id, null, 'open'],
    );
    assert.match(exception.reason, /after the ledger had failed it \(partner_error/);
    assert.match(exception.reason, /5\.13 owed through sys:receivable:late_completion:USD/);

    const resolve = (body: Record<string, unknown>) =>
      call(base(), 'POST', `/v1/reconciliation-exceptions/${exception.id}/resolve`, body, { token: master(), idempotencyKey: randomUUID() });
    expectError(await resolve({ resolution: 'adjusted', note: 'nothing differs with the partner' }), 422, 'nothing_to_adjust', 'resolution');
    expectError(await resolve({ resolution: 'matched', note: 'no other side', statement_line_id: 'stl_x' }), 422, 'exception_pair_mismatch', 'statement_line_id');
    const explained = await resolve({ resolution: 'explained', note: 'the 5.13 is collected from the sender' });
    assert.equal(explained.status, 200, JSON.stringify(explained.body));
    assert.deepEqual([explained.body.status, explained.body.resolution, explained.body.resolved_by, explained.body.adjustment_entry_id], ['resolved', 'explained', 'master_key', null]);
    expectError(await resolve({ resolution: 'explained', note: 'again' }), 409, 'exception_already_resolved', 'id');
  });
});
