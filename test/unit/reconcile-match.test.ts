// The matching passes of a reconciliation (src/finance/match.ts), on hand-made sides.
import assert from 'node:assert/strict';
import { reconcile, type LedgerMovement, type StatementEntry } from '../../src/finance/match';
import { Money } from '../../ledger/money';

const DAY = '2026-11-20';
const rules = { from: DAY, to: DAY, amountTolerance: new Money(0), dateToleranceDays: 1 };
const move = (entryId: string, amount: string, reference: string | null = null, date = DAY): LedgerMovement => ({ entryId, reference, currency: 'USD', amount: new Money(amount), date });
const line = (lineId: string, amount: string, reference = `ref-${lineId}`, valueDate = DAY, fee = '0', settles: string[] | null = null): StatementEntry => ({
  lineId, reference, currency: 'USD', amount: new Money(amount), fee: new Money(fee), net: new Money(amount).minus(fee), valueDate, settles,
});

describe('reconciliation matching', () => {
  it('matches by reference first, then by amount and date, and leaves the rest on their own side', () => {
    const report = reconcile(
      [move('e1', '10.00', 'p1'), move('e2', '-20.00', null), move('e3', '30.00', 'p3')],
      [line('l1', '10.00', 'p1'), line('l2', '-20.00', 'unknown', '2026-11-21'), line('l4', '40.00', 'p4')],
      rules,
    );
    assert.deepEqual(report.summary, { matched: 2, ledger_only: 1, statement_only: 1, mismatched: 0 });
    const byEntry = Object.fromEntries(report.items.map((i) => [i.ledger_entry_id ?? i.statement_line_id, [i.category, i.statement_line_id]]));
    assert.deepEqual(byEntry, { e1: ['matched', 'l1'], e2: ['matched', 'l2'], e3: ['ledger_only', null], l4: ['statement_only', 'l4'] });
    // Totals are per side over the days reported: l2's value date is the next day.
    assert.deepEqual(report.totals, [{ currency: 'USD', ledger: '20.00', statement: '50.00', matched: '-10.00', difference: '30.00' }]);
  });

  it('names the field that disagrees on a pair found by reference, and reports a duplicate line once', () => {
    const report = reconcile(
      [move('e1', '10.00', 'p1'), move('e2', '10.00', 'p2'), move('e3', '10.00', 'p3')],
      [line('l1', '10.00', 'p1', DAY, '0.50'), line('l2', '9.00', 'p2'), line('l3', '10.00', 'p3', '2026-11-23'), line('l3b', '10.00', 'p3', '2026-11-23')],
      rules,
    );
    const fields = report.items.map((i) => [i.ledger_entry_id, i.statement_line_id, i.category, i.field, i.ledger_value, i.statement_value]);
    assert.deepEqual(fields, [
      ['e1', 'l1', 'mismatched', 'fee', '0.00', '0.50'],
      ['e2', 'l2', 'mismatched', 'amount', '10.00', '9.00'],
      ['e3', 'l3', 'mismatched', 'value_date', DAY, '2026-11-23'],
      ['e3', 'l3b', 'statement_only', 'reference', null, 'p3'],
    ]);
  });

  describe('a batch line on a day with other unmatched movements', () => {
    // Two pay-ins the partner left off its statement, and three it settled in one batch line.
    const movements = [move('missing1', '10.00', 'pm1'), move('missing2', '20.00', 'pm2'), move('b1', '5.00', 'pb1'), move('b2', '6.00', 'pb2'), move('b3', '7.00', 'pb3')];
    const categories = (report: ReturnType<typeof reconcile>) => Object.fromEntries(report.items.map((i) => [i.ledger_entry_id ?? i.statement_line_id, i.category]));

    it('matches by the settlement detail the line lists, and leaves the left-off pay-ins ledger_only', () => {
      const report = reconcile(movements, [line('batch', '18.00', 'batch-ref', DAY, '0', ['pb1', 'pb2', 'pb3'])], rules);
      assert.deepEqual(categories(report), { missing1: 'ledger_only', missing2: 'ledger_only', b1: 'matched', b2: 'matched', b3: 'matched' });
      assert.match(report.items.find((i) => i.ledger_entry_id === 'b1')!.reason, /settlement detail/);
      assert.equal(reconcile(movements, [line('batch', '18.00', 'batch-ref', DAY, '0', ['pb1', 'pb2', 'pb3'])], rules).items.length, 5, 'the same every run');
    });

    it('without detail (an uploaded statement), finds the movements that add up to the line', () => {
      const report = reconcile(movements, [line('batch', '18.00', 'batch-ref')], rules);
      assert.deepEqual(categories(report), { missing1: 'ledger_only', missing2: 'ledger_only', b1: 'matched', b2: 'matched', b3: 'matched' });
      assert.match(report.items.find((i) => i.ledger_entry_id === 'b3')!.reason, /matched by amount/);
    });

    it('reports the listed payments as mismatched when they do not add up to the line', () => {
      const report = reconcile(movements, [line('batch', '19.00', 'batch-ref', DAY, '0', ['pb1', 'pb2', 'pb3'])], rules);
      const b1 = report.items.find((i) => i.ledger_entry_id === 'b1')!;
      assert.deepEqual([b1.category, b1.field, b1.ledger_value, b1.statement_value], ['mismatched', 'amount', '18.00', '19.00']);
    });

    it('gives up within its bounds on a line no set of movements adds up to', () => {
      const many = Array.from({ length: 40 }, (_, i) => move(`m${i}`, `${(i + 1) * 2}.00`, `p${i}`));
      const started = Date.now();
      const report = reconcile(many, [line('odd', '41.00', 'odd-ref')], rules); // even amounts never add up to an odd one
      assert.equal(categories(report).odd, 'statement_only');
      assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
    });
  });

  it('settles a batch line against the movements it adds up to, even with one of them missing from the statement', () => {
    const movements = [move('e1', '-5.00', 'p1'), move('e2', '-7.00', 'p2'), move('e3', '-11.00', 'p3'), move('e4', '3.00', 'p4')];
    const report = reconcile(movements, [line('batch', '-16.00', 'batch-ref')], rules);
    assert.deepEqual(report.items.map((i) => [i.ledger_entry_id, i.category, i.statement_line_id]), [
      ['e1', 'matched', 'batch'], ['e3', 'matched', 'batch'], ['e2', 'ledger_only', null], ['e4', 'ledger_only', null],
    ]);
  });

  it('matches within the tolerances, and reports only what falls on the days of the report', () => {
    const report = reconcile(
      [move('e1', '10.00', 'p1'), move('outside', '99.00', 'p9', '2026-11-25')],
      [line('l1', '10.00', 'p1', '2026-11-22', '0.30'), line('early', '98.00', 'p8', '2026-11-10')],
      { ...rules, amountTolerance: new Money('0.30'), dateToleranceDays: 2 },
    );
    assert.deepEqual(report.items.map((i) => [i.ledger_entry_id, i.category]), [['e1', 'matched']]);
  });
});
