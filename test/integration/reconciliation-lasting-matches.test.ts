// A match that lasts (issue 49, items 1, 2 and 4), on a service of its own: a line whose amount the
// partner wrote short ("97.4", "100") matched by hand stays matched in the next run; a bank line
// matched to one payment stays matched to it when the day is exported again (other ids, one line
// more, CRLF), however many payments of its amount settle meanwhile; a movement chosen by hand
// for one ambiguous line is refused for another, 409 `already_matched`, and that line stays open.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { expectError } from '../support/expect';
import { FinanceDesk } from '../support/finance-desk';
import { call } from '../support/http';
import { daysAfter, today } from '../support/days';

interface Item { category: string; statement_amount: string | null; statement_line_id: string | null; ledger_entry_id: string | null; reference: string | null; reason: string }
interface Exception { id: string; category: string; status: string; ledger_entry_id: string | null; statement_line_id: string | null; reference: string | null }

describe('reconciliation: a match lasts', function () {
  this.timeout(120_000);
  const desk = new FinanceDesk('lasting_matches');
  const base = () => desk.service.baseUrl;
  const master = () => desk.service.config.masterKey;

  before(async () => {
    await desk.start({ PAYMENT_SETTLE_INTERVAL_MS: '100', RECONCILIATION_CHECK_MS: '0' }, () => undefined);
  });
  after(async () => desk.stop());

  /** A stored report, with every item (matched ones too: its CSV lists them all). */
  const reconcile = async (body: Record<string, unknown>): Promise<{ items: Item[]; exceptions: { opened: number } }> => {
    const report = await call(base(), 'POST', '/v1/reconciliations', { partner: 'openbank', ...body }, { token: master(), idempotencyKey: randomUUID() });
    assert.equal(report.status, 201, JSON.stringify(report.body));
    const csv = await (await fetch(`${base()}/v1/reconciliations/${report.body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } })).text();
    // Fields are quoted where they hold a comma ("" a quote inside); no field holds a line break.
    const fields = (row: string) => [...row.matchAll(/(?:^|,)("(?:[^"]|"")*"|[^,]*)/g)].map(([, f]) => (f.startsWith('"') ? f.slice(1, -1).replaceAll('""', '"') : f));
    const [header, ...rows] = csv.trim().split(/\r?\n/).map(fields);
    const items = rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i] === '' ? null : row[i]])) as unknown as Item);
    return { ...report.body, items };
  };
  const resolve = (id: string, body: Record<string, unknown>) =>
    call(base(), 'POST', `/v1/reconciliation-exceptions/${id}/resolve`, body, { token: master(), idempotencyKey: randomUUID() });
  const open = async (): Promise<Exception[]> =>
    (await call(base(), 'GET', '/v1/reconciliation-exceptions?partner=openbank&status=open&limit=200', undefined, { token: master() })).body.data;
  /** The ledger entry of a pay-in, as its `ledger_only` exception after a run of today names it. */
  const entryOf = async (reference: string): Promise<Exception> => {
    const alone = (await open()).find((e) => e.category === 'ledger_only' && e.reference === reference);
    assert.ok(alone?.ledger_entry_id, `the pay-in ${reference} is reported alone`);
    return alone;
  };

  it('keeps a match by hand of a line written "97.4" and one written "100" in the next run of the same statement', async () => {
    const tomorrow = daysAfter(today(), 1);
    const payIns = [await desk.settledPayIn('97.40', 'statement_missing'), await desk.settledPayIn('100.00', 'statement_missing')];
    await reconcile({ from: today(), to: today() });
    // The bank's own references: never paired with the pay-ins' by a run, only by hand.
    const csv = `id,reference,amount,currency,value_date\n1,bank-a,97.4,USD,${tomorrow}\n2,bank-b,100,USD,${tomorrow}\n`;
    const first = await reconcile({ from: tomorrow, to: tomorrow, statement_csv: csv });
    for (const [i, payIn] of payIns.entries()) {
      const line = first.items.find((item) => item.reference === `bank-${'ab'[i]}`);
      assert.equal(line?.category, 'statement_only', JSON.stringify(first.items));
      const alone = await entryOf(payIn.external_id);
      const matched = await resolve(alone.id, { resolution: 'matched', note: 'the bank used its own reference', statement_line_id: line.statement_line_id });
      assert.equal(matched.status, 200, JSON.stringify(matched.body));
    }
    const again = await reconcile({ from: tomorrow, to: tomorrow, statement_csv: csv });
    assert.deepEqual(again.items.map((item) => [item.statement_amount, item.category, item.reason]).sort(), [['100.00', 'matched', 'by_hand'], ['97.40', 'matched', 'by_hand']], JSON.stringify(again.items));
    assert.equal(again.exceptions.opened, 0, 'nothing opens again');
    const stillOpen = (await open()).filter((e) => payIns.some((p) => p.external_id === e.reference) || ['bank-a', 'bank-b'].includes(e.reference ?? ''));
    assert.deepEqual(stillOpen, [], 'the queue stays resolved');
  });

  it('keeps a bank line matched to its payment when the day is exported again, though another payment of its amount settled meanwhile', async () => {
    const day = daysAfter(today(), 2);
    const first = await desk.settledPayIn('55.10', 'statement_missing');
    await reconcile({ from: today(), to: today() });
    const csv = `id,reference,amount,currency,value_date\n7,,55.1,USD,${day}\n`;
    const report = await reconcile({ from: day, to: day, statement_csv: csv, date_tolerance_days: 3 });
    const [line] = report.items.filter((item) => item.statement_line_id !== null);
    assert.deepEqual([line.category, line.reason.split(';')[0]], ['matched', 'amount_and_date'], JSON.stringify(report.items));
    assert.ok(line.ledger_entry_id);
    const second = await desk.settledPayIn('55.10', 'statement_missing');
    await reconcile({ from: today(), to: today() });
    const secondEntry = (await entryOf(second.external_id)).ledger_entry_id;
    // Another export of the day: its own ids, a line more, CRLF, the amount written in full.
    const reexport = `id,reference,amount,currency,value_date\r\nA,,3.21,USD,${day}\r\nB,,55.10,USD,${day}\r\n`;
    const again = await reconcile({ from: day, to: day, statement_csv: reexport, date_tolerance_days: 3 });
    const same = again.items.find((item) => item.statement_line_id === line.statement_line_id);
    assert.deepEqual([same?.category, same?.ledger_entry_id], ['matched', line.ledger_entry_id], `the line keeps its payment: ${JSON.stringify(again.items)}`);
    assert.ok(!again.items.some((item) => item.ledger_entry_id === secondEntry && item.category === 'matched'), 'the payment the partner never settled is not matched');
    assert.ok(first.external_id !== second.external_id);
  });

  it('refuses a movement chosen by hand for a second ambiguous line, 409 already_matched, and that line stays open', async () => {
    const day = daysAfter(today(), 3);
    const payIns = [await desk.settledPayIn('33.30', 'statement_missing'), await desk.settledPayIn('33.30', 'statement_missing')];
    await reconcile({ from: today(), to: today() });
    const [m1, m2] = [(await entryOf(payIns[0].external_id)).ledger_entry_id!, (await entryOf(payIns[1].external_id)).ledger_entry_id!];
    // Two bank lines of one content: two lines, each fitting both pay-ins.
    const report = await reconcile({ from: day, to: day, statement_csv: `id,reference,amount,currency,value_date\n1,,33.30,USD,${day}\n2,,33.3,USD,${day}\n`, date_tolerance_days: 3 });
    const lines = report.items.filter((item) => item.category === 'ambiguous' && item.statement_line_id !== null);
    assert.equal(lines.length, 2, JSON.stringify(report.items));
    const ambiguous = (await open()).filter((e) => e.category === 'ambiguous' && lines.some((l) => l.statement_line_id === e.statement_line_id));
    assert.equal(ambiguous.length, 2);
    const chosen = await resolve(ambiguous[0].id, { resolution: 'matched', note: 'the customer says so', ledger_entry_id: m1 });
    assert.equal(chosen.status, 200, JSON.stringify(chosen.body));
    const twice = await resolve(ambiguous[1].id, { resolution: 'matched', note: 'the same payment again', ledger_entry_id: m1 });
    expectError(twice, 409, 'already_matched', 'ledger_entry_id', 'a movement chosen for another line');
    assert.match(twice.body.message, new RegExp(`ledger entry ${m1} is matched already`));
    const after = (await call(base(), 'GET', `/v1/reconciliation-exceptions/${ambiguous[1].id}`, undefined, { token: master() })).body;
    assert.equal(after.status, 'open', 'the refused choice changed nothing');
    const other = await resolve(ambiguous[1].id, { resolution: 'matched', note: 'the other payment', ledger_entry_id: m2 });
    assert.equal(other.status, 200, JSON.stringify(other.body));
  });
});
