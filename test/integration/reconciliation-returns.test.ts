// The returns of transfers reconciled (DESIGN.md sections 5e and 5h): the partner's statement lists
// a return as a line of its own (type `return`, crediting our account, its reference the partner's
// id of the return, `client_reference` the reversal), and a reconciliation matches it with the
// return's settlement in the ledger by that reference: a completed return raises no exception. A
// return the partner made that the ledger never asked for is statement_only, and one the ledger
// settled that the statement leaves out is ledger_only, each an exception for finance. On a
// service of its own, so that its fiat days hold only what this test sent.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PartnerClient } from '../../src/partners/client';
import { signUp, type SignedUp } from '../support/accounts';
import { today } from '../support/days';
import { FinanceDesk } from '../support/finance-desk';
import { call, eventually } from '../support/http';
import { fund, transferReaches } from '../support/money';

describe('reconciliation of the returns of transfers', function () {
  this.timeout(120_000);
  const desk = new FinanceDesk('returns');
  let sender: SignedUp;
  let payee: SignedUp;
  const base = () => desk.service.baseUrl;
  const master = () => desk.service.config.masterKey;
  const fiat = () => {
    const rails = desk.service.roles.find((r) => r.role === 'mock-rails')!.url!;
    const { partnerClientId: clientId, partnerClientSecret: clientSecret } = desk.service.config;
    return new PartnerClient({ baseUrl: `${rails}/fiat`, clientId, clientSecret });
  };

  before(async () => {
    await desk.start({}, () => undefined);
    [sender, payee] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), sender.key, 'USD', '100.00');
  });
  after(() => desk.stop());

  async function bankTransfer(amount: string): Promise<{ transfer_id: string; partner_payment_id: string }> {
    const viban = payee.vibans.find((v) => v.currency === 'USD')! as Record<string, string>;
    const bank = { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency: 'USD' };
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient: { email: payee.email, name: 'Payee', bank }, amount, currency: 'USD' }, { token: sender.key, idempotencyKey: randomUUID() });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    return transferReaches(base(), sender.key, sent.body.transfer_id, 'completed', 30_000);
  }

  /** Reverses `amount` of the transfer (with a scenario for the partner) and waits until the partner has returned it; its partner id. */
  async function returned(transferId: string, amount: string, scenario?: string): Promise<{ id: string; partnerReturnId: string }> {
    const asked = await call(base(), 'POST', `/v1/transfers/${transferId}/reversals`, { amount }, { token: sender.key, idempotencyKey: randomUUID(), headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
    assert.equal(asked.status, 201, JSON.stringify(asked.body));
    return eventually(async () => {
      const row = await desk.service.runtime.db('transfers').where('id', transferId).first('reversals');
      const reversal = row.reversals.find((r: { id: string }) => r.id === asked.body.id);
      return reversal?.status === 'completed' ? { id: reversal.id, partnerReturnId: reversal.partner_return_id } : undefined;
    }, 30_000, 'the return to complete');
  }

  const reconcile = () => call(base(), 'POST', '/v1/reconciliations', { partner: 'fiat', from: today(), to: today() }, { token: master() });

  it('lists a return on the partner\'s statement as a line of its own and matches it with the return\'s settlement: no exception', async () => {
    const sent = await bankTransfer('40.00');
    const back = await returned(sent.transfer_id, '15.00');
    assert.match(back.partnerReturnId, /^fiat_/);
    const lines = [];
    for await (const page of fiat().statementPages(today(), 100)) lines.push(...page.lines);
    const line = lines.find((l) => l.reference === back.partnerReturnId) as unknown as Record<string, unknown>;
    assert.deepEqual([line?.type, line?.client_reference, line?.returns, line?.amount, line?.net], ['return', back.id, sent.partner_payment_id, '15.00', '15.00'], JSON.stringify(lines));

    const report = await reconcile();
    assert.equal(report.status, 201, JSON.stringify(report.body));
    assert.deepEqual(report.body.summary, { matched: 2, ledger_only: 0, statement_only: 0, mismatched: 0, ambiguous: 0, batch: 0 }, JSON.stringify(report.body.items));
    assert.deepEqual(report.body.exceptions, { opened: 0, resolved: 0 });
    assert.deepEqual(report.body.totals, [{ currency: 'USD', ledger: '-25.00', statement: '-25.00', matched: '-25.00', difference: '0.00' }], 'the payout debits, the return credits');
    const csv = await (await fetch(`${base()}/v1/reconciliations/${report.body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } })).text();
    const row = csv.split('\n').find((r) => r.includes(back.partnerReturnId)) ?? '';
    assert.match(row, /^matched,/, csv);
    assert.ok(row.includes(back.id) && row.includes(`stl_${back.partnerReturnId}`), `matched with the entry named after its reversal: ${row}`);
  });

  it('reports a return the partner made without the ledger statement_only, and one the statement leaves out ledger_only, each an exception', async () => {
    const sent = await bankTransfer('30.00');
    const left = await returned(sent.transfer_id, '10.00', 'statement_missing');
    const rogue = await fiat().submitReturn(sent.partner_payment_id, { reference: randomUUID(), amount: '5.00', currency: 'USD' });
    assert.equal(rogue.status, 'completed');

    const report = await reconcile();
    assert.equal(report.status, 201, JSON.stringify(report.body));
    assert.deepEqual(report.body.summary, { matched: 3, ledger_only: 1, statement_only: 1, mismatched: 0, ambiguous: 0, batch: 0 }, JSON.stringify(report.body.items));
    assert.deepEqual(report.body.exceptions, { opened: 2, resolved: 0 });
    const byCategory = Object.fromEntries(report.body.items.map((i: Record<string, unknown>) => [i.category, i]));
    assert.deepEqual([byCategory.ledger_only.reference, byCategory.ledger_only.ledger_entry_id, byCategory.ledger_only.ledger_amount], [left.partnerReturnId, left.id, '10.00']);
    assert.deepEqual([byCategory.statement_only.reference, byCategory.statement_only.statement_line_id, byCategory.statement_only.statement_amount], [rogue.id, `stl_${rogue.id}`, '5.00']);
  });
});
