// Matching finance can sign off (issue 39), end to end through the routes and Postgres, on a
// service of its own: contradicting references never pair; a line without reference that fits
// two movements is one ambiguous exception with both candidates; a side matched once is never
// matched again by a later run; a batch whose detail disagrees is ONE exception whose adjustment
// posts the true difference; uploads' line ids never collide; a duplicate line can be adjusted.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { FinanceDesk, type SettledPayIn } from '../support/finance-desk';
import { call } from '../support/http';
import { violations } from '../support/load';
import { daysAfter, today } from '../support/days';


interface Exception { id: string; category: string; reference: string | null; statement_line_id: string | null; ledger_entry_id: string | null; ledger_amount: string | null; statement_amount: string | null; movements: Array<{ ledger_entry_id: string }>; candidates: Array<{ ledger_entry_id: string | null }>; status: string }

describe('reconciliation matching: never wrong, only unsure', function () {
  this.timeout(240_000);
  const desk = new FinanceDesk('matching');
  const base = () => desk.service.baseUrl;
  const master = () => desk.service.config.masterKey;
  before(() => desk.start({ PAYMENT_SETTLE_INTERVAL_MS: '100' }, () => undefined));
  after(() => desk.stop());

  const upload = (lines: string[], body: Record<string, unknown> = {}) => call(base(), 'POST', '/v1/reconciliations',
    { partner: 'openbank', from: today(), to: today(), statement_csv: `id,reference,amount,currency,value_date,settles\n${lines.join('\n')}\n`, ...body }, { token: master() });
  const exceptions = async (): Promise<Exception[]> => (await call(base(), 'GET', '/v1/reconciliation-exceptions?partner=openbank&limit=100', undefined, { token: master() })).body.data;
  const entryOf = async (payment: SettledPayIn) => (await desk.service.runtime.db('journal_entries').where({ payment_id: payment.id, kind: 'payment_settle' }).first('id')).id as string;
  const adjust = (id: string) => call(base(), 'POST', `/v1/reconciliation-exceptions/${id}/resolve`, { resolution: 'adjusted', note: 'post the difference' }, { token: master(), idempotencyKey: randomUUID() });
  const settlementPosting = async (entryId: string) => (await desk.service.runtime.db.raw(
    `SELECT p.amount::numeric(20,2)::text AS amount FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id WHERE p.entry_id = ? AND la.code = 'sys:partner:openbank:USD'`, [entryId])).rows[0]?.amount;

  it('never pairs an uploaded line whose reference names no payment with a settled pay-in of its amount', async () => {
    const paid = await desk.settledPayIn('61.17', 'statement_missing');
    const report = await upload([`x1,openbank_${randomUUID()},61.17,USD,${today()},`]);
    assert.equal(report.status, 201, JSON.stringify(report.body));
    const items = report.body.items.filter((i: { ledger_amount: string | null; statement_amount: string | null }) => i.ledger_amount === '61.17' || i.statement_amount === '61.17');
    assert.deepEqual(items.map((i: { category: string }) => i.category).sort(), ['ledger_only', 'statement_only']);
    assert.equal(items.find((i: { category: string }) => i.category === 'ledger_only').ledger_entry_id, await entryOf(paid));
  });

  it('accepts a line without reference, and makes it ONE ambiguous exception when two movements fit, listing both', async () => {
    const a = await desk.settledPayIn('62.31');
    const b = await desk.settledPayIn('62.31');
    const report = await upload([`amb,,62.31,USD,${today()},`]);
    assert.equal(report.status, 201, JSON.stringify(report.body));
    assert.equal(report.body.summary.ambiguous, 1);
    const [ambiguous] = (await exceptions()).filter((e) => e.category === 'ambiguous');
    assert.deepEqual(ambiguous.candidates.map((c) => c.ledger_entry_id).sort(), [await entryOf(a), await entryOf(b)].sort());
    assert.deepEqual([ambiguous.movements, ambiguous.statement_amount, ambiguous.ledger_amount], [[], '62.31', null]);
  });

  it('matches a side once for good: a movement a run paired with the line of the day before is not paired again with the line of the day after', async () => {
    const paid = await desk.settledPayIn('63.47');
    const first = await upload([`d1,,63.47,USD,${daysAfter(today(), -1)},`], { from: daysAfter(today(), -1), to: daysAfter(today(), -1), date_tolerance_days: 1 });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const csv = await (await fetch(`${base()}/v1/reconciliations/${first.body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } })).text();
    const entry = await entryOf(paid);
    assert.match(csv.split('\n').find((row) => row.includes(entry)) ?? '', /^matched,.*,amount_and_date\r?$/);
    const second = await upload([`d2,,63.47,USD,${daysAfter(today(), 1)},`], { from: daysAfter(today(), 1), to: daysAfter(today(), 1), date_tolerance_days: 1 });
    assert.equal(second.status, 201, JSON.stringify(second.body));
    assert.equal(second.body.summary.matched, 0, JSON.stringify(second.body.items));
    const again = second.body.items.find((i: { statement_amount: string; reference: string | null }) => i.statement_amount === '63.47' && i.reference === null);
    assert.equal(again.category, 'statement_only', 'the partner settled the payment twice: an exception');
    const { rows } = await desk.service.runtime.db.raw('SELECT count(*)::int AS n FROM reconciliation_matches WHERE ledger_entry_id = ?', [entry]);
    assert.equal(rows[0].n, 1);
  });

  it('makes a batch line whose payments disagree with it ONE exception, and adjusts exactly the difference', async () => {
    const batch = [await desk.settledPayIn('100.00', 'statement_missing'), await desk.settledPayIn('100.00', 'statement_missing'), await desk.settledPayIn('100.00', 'statement_missing')];
    const report = await upload([`b1,batch-1,290.00,USD,${today()},${batch.map((p) => p.external_id).join(' ')}`]);
    assert.equal(report.status, 201, JSON.stringify(report.body));
    const batches = (await exceptions()).filter((e) => e.category === 'batch');
    assert.equal(batches.length, 1);
    const [one] = batches;
    assert.deepEqual([one.ledger_amount, one.statement_amount, one.movements.map((m) => m.ledger_entry_id).sort()], ['300.00', '290.00', (await Promise.all(batch.map(entryOf))).sort()]);
    const entries = await Promise.all(batch.map(entryOf));
    assert.ok(!(await exceptions()).some((e) => e.ledger_entry_id !== null && entries.includes(e.ledger_entry_id)), 'no exception per movement');
    const adjusted = await adjust(one.id);
    assert.equal(adjusted.status, 200, JSON.stringify(adjusted.body));
    assert.equal(await settlementPosting(adjusted.body.adjustment_entry_id), '10.00', 'the partner paid 10.00 less: exactly that is adjusted');
  });

  it('keeps the lines of two uploads that both number a line "7" apart: a line is named by its content, not its id', async () => {
    const references = [`ext-a-${randomUUID()}`, `ext-b-${randomUUID()}`];
    const first = await upload([`7,${references[0]},-64.01,USD,${today()},`]);
    const second = await upload([`7,${references[1]},-64.02,USD,${today()},`]);
    assert.deepEqual([first.status, second.status], [201, 201]);
    const sevens = (await exceptions()).filter((e) => references.includes(e.reference ?? ''));
    assert.deepEqual(sevens.map((e) => e.statement_amount).sort(), ['-64.01', '-64.02']);
    assert.equal(new Set(sevens.map((e) => e.statement_line_id)).size, 2);
  });

  it('adjusts a duplicate statement line: it carries no ledger amount, so the adjustment is the line', async () => {
    await desk.settledPayIn('65.43', 'statement_duplicate');
    const report = await call(base(), 'POST', '/v1/reconciliations', { partner: 'openbank', from: today(), to: today() }, { token: master() });
    assert.equal(report.status, 201, JSON.stringify(report.body));
    const duplicate = (await exceptions()).find((e) => e.category === 'statement_only' && e.statement_amount === '65.43')!;
    assert.equal(duplicate.ledger_amount, null);
    const adjusted = await adjust(duplicate.id);
    assert.equal(adjusted.status, 200, JSON.stringify(adjusted.body));
    assert.equal(await settlementPosting(adjusted.body.adjustment_entry_id), '-65.43');
    assert.deepEqual(await violations(desk.service.runtime.db), {});
  });
});
