// The transfers we send through a partner, reconciled (DESIGN.md section 5e; README "For
// finance"): the partner's statement lists every movement on our account with it, our own bank
// transfers included (a payout line whose client_reference is the transfer id), and a
// reconciliation matches each with the transfer's settlement by the partner payment id. On a
// service of its own, so that its fiat days hold only the transfers this test sent.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { PartnerClient } from '../../src/partners/client';
import { signUp, type SignedUp } from '../support/accounts';
import { FinanceDesk } from '../support/finance-desk';
import { call } from '../support/http';
import { fund, transferReaches } from '../support/money';
import { today } from '../support/days';


describe('reconciliation of the transfers we send through a partner', function () {
  this.timeout(120_000);
  const desk = new FinanceDesk('transfers');
  let sender: SignedUp;
  let payee: SignedUp;
  const base = () => desk.service.baseUrl;
  const master = () => desk.service.config.masterKey;

  before(async () => {
    await desk.start({}, () => undefined);
    [sender, payee] = await Promise.all([signUp(base()), signUp(base())]);
    await fund(base(), sender.key, 'USD', '100.00');
  });
  after(() => desk.stop());

  /** Sends `amount` USD to the payee's bank account (a payout through fiat) and waits until it is completed. */
  async function bankTransfer(amount: string, scenario?: string): Promise<{ transfer_id: string; partner_payment_id: string }> {
    const viban = payee.vibans.find((v) => v.currency === 'USD')!;
    const bank = { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, routing_number: viban.routing_number, currency: 'USD' };
    const sent = await call(base(), 'POST', '/v1/transfers', { recipient: { email: payee.email, name: 'Payee', bank }, amount, currency: 'USD' },
      { token: sender.key, idempotencyKey: randomUUID(), headers: scenario ? { 'Sandbox-Scenario': scenario } : {} });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const done = await transferReaches(base(), sender.key, sent.body.transfer_id, 'completed', 30_000);
    assert.match(done.partner_payment_id, /^fiat_/);
    return done;
  }
  const reconcile = (body: Record<string, unknown> = {}) => call(base(), 'POST', '/v1/reconciliations', { partner: 'fiat', from: today(), to: today(), ...body }, { token: master() });
  const settlementOf = async (transferId: string) => (await desk.service.runtime.db('journal_entries').where({ transfer_id: transferId, kind: 'transfer_settle' }).first('id')).id as string;
  const openExceptions = async () => (await call(base(), 'GET', '/v1/reconciliation-exceptions?partner=fiat&status=open&limit=100', undefined, { token: master() })).body.data;

  it('matches a bank transfer with its line on the partner\'s statement, by the partner payment id, and opens no exception', async () => {
    const sent = await bankTransfer('40.00');

    // The partner's own statement, read as the reconciliation reads it: the transfer is a payout line.
    const rails = desk.service.roles.find((r) => r.role === 'mock-rails')!.url!;
    const { partnerClientId: clientId, partnerClientSecret: clientSecret } = desk.service.config;
    const fiat = new PartnerClient({ baseUrl: `${rails}/fiat`, clientId, clientSecret });
    const lines = [];
    for await (const page of fiat.statementPages(today(), 100)) lines.push(...page.lines);
    const line = lines.find((l) => l.reference === sent.partner_payment_id) as unknown as Record<string, unknown>;
    assert.deepEqual([line?.type, line?.client_reference, line?.amount, line?.net], ['payout', sent.transfer_id, '-40.00', '-40.00'], JSON.stringify(lines));

    const report = await reconcile();
    assert.equal(report.status, 201, JSON.stringify(report.body));
    assert.deepEqual(report.body.summary, { matched: 1, ledger_only: 0, statement_only: 0, mismatched: 0, ambiguous: 0, batch: 0 }, JSON.stringify(report.body.items));
    assert.deepEqual([report.body.items, report.body.exceptions], [[], { opened: 0, resolved: 0 }]);
    assert.deepEqual(report.body.totals, [{ currency: 'USD', ledger: '-40.00', statement: '-40.00', matched: '-40.00', difference: '0.00' }], 'a payout debits our account with the partner');
    const csv = await (await fetch(`${base()}/v1/reconciliations/${report.body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } })).text();
    const row = csv.split('\n').find((r) => r.includes(sent.partner_payment_id)) ?? '';
    assert.match(row, /^matched,/, `the transfer's movement is matched: ${csv}`);
    assert.ok(row.includes(await settlementOf(sent.transfer_id)) && row.includes(`stl_${sent.partner_payment_id}`), `its settlement entry with its line: ${row}`);
    assert.match(row, /,reference\r?$/, 'matched by the partner payment id');
    assert.deepEqual(await openExceptions(), []);
  });

  it('reports a transfer whose line the statement leaves out ledger_only, naming its settlement, and opens one exception for it', async () => {
    const left = await bankTransfer('10.13', 'statement_missing');
    const report = await reconcile();
    assert.equal(report.status, 201, JSON.stringify(report.body));
    assert.deepEqual(report.body.summary, { matched: 1, ledger_only: 1, statement_only: 0, mismatched: 0, ambiguous: 0, batch: 0 }, JSON.stringify(report.body.items));
    assert.deepEqual(report.body.exceptions, { opened: 1, resolved: 0 });
    const [lost] = report.body.items;
    assert.deepEqual([lost.category, lost.reference, lost.ledger_entry_id, lost.statement_line_id, lost.ledger_amount, lost.currency],
      ['ledger_only', left.partner_payment_id, await settlementOf(left.transfer_id), null, '-10.13', 'USD']);
    assert.equal(lost.reason, `no statement line settles it (partner reference ${left.partner_payment_id})`);

    const open = await openExceptions();
    assert.deepEqual(open.map((e: Record<string, unknown>) => [e.category, e.reference, e.ledger_entry_id, e.reconciliation_id]),
      [['ledger_only', left.partner_payment_id, lost.ledger_entry_id, report.body.id]]);
  });
});
