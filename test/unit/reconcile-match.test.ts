// The matching passes of a reconciliation (src/reconciliation/match.ts), on hand-made sides.
import assert from 'node:assert/strict';
import type { LedgerMovement, StatementEntry } from '../../src/reconciliation/match';
import { reconcile, reconcileRun } from '../../src/reconciliation/match-in-memory';
import { itemsCopy, jobOf, runJob, searchInWorker } from '../../src/reconciliation/search-thread';
import { Money } from '../../ledger/money';

const DAY = '2026-11-20';
const rules = { from: DAY, to: DAY, amountTolerance: new Money(0), dateToleranceDays: 1 };
const move = (entryId: string, amount: string, reference: string | null = null, date = DAY): LedgerMovement => ({ entryId, reference, currency: 'USD', amount: new Money(amount), date });
const line = (lineId: string, amount: string, reference: string | null = `ref-${lineId}`, valueDate = DAY, fee = '0', settles: string[] | null = null): StatementEntry => ({
  lineId, reference, currency: 'USD', amount: new Money(amount), fee: new Money(fee), net: new Money(amount).minus(fee), valueDate, settles,
});

describe('reconciliation matching', () => {
  it('matches by reference first, then by amount and date, and leaves the rest on their own side', () => {
    const report = reconcile(
      [move('e1', '10.00', 'p1'), move('e2', '-20.00', null), move('e3', '30.00', 'p3')],
      [line('l1', '10.00', 'p1'), line('l2', '-20.00', 'unknown', '2026-11-21'), line('l4', '40.00', 'p4')],
      rules,
    );
    assert.deepEqual(report.summary, { matched: 2, ledger_only: 1, statement_only: 1, mismatched: 0, ambiguous: 0, batch: 0 });
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
      [null, 'l3b', 'statement_only', 'reference', null, 'p3'],
    ]);
  });

  describe('a batch line on a day with other unmatched movements', () => {
    // Two pay-ins the partner left off its statement, and three it settled in one batch line.
    const movements = [move('missing1', '10.00', 'pm1'), move('missing2', '20.00', 'pm2'), move('b1', '5.00', 'pb1'), move('b2', '6.00', 'pb2'), move('b3', '7.00', 'pb3')];
    const categories = (report: ReturnType<typeof reconcile>) => Object.fromEntries(report.items.map((i) => [i.ledger_entry_id ?? i.statement_line_id, i.category]));

    it('matches by the settlement detail the line lists, and leaves the left-off pay-ins ledger_only', () => {
      const report = reconcile(movements, [line('batch', '18.00', 'batch-ref', DAY, '0', ['pb1', 'pb2', 'pb3'])], rules);
      assert.deepEqual(categories(report), { missing1: 'ledger_only', missing2: 'ledger_only', b1: 'matched', b2: 'matched', b3: 'matched' });
      assert.equal(report.items.find((i) => i.ledger_entry_id === 'b1')!.reason, 'reference');
      assert.equal(reconcile(movements, [line('batch', '18.00', 'batch-ref', DAY, '0', ['pb1', 'pb2', 'pb3'])], rules).items.length, 5, 'the same every run');
    });

    it('without detail (an uploaded statement), finds the movements that add up to the line', () => {
      const report = reconcile(movements, [line('batch', '18.00', null)], rules);
      assert.deepEqual(categories(report), { missing1: 'ledger_only', missing2: 'ledger_only', b1: 'matched', b2: 'matched', b3: 'matched' });
      assert.equal(report.items.find((i) => i.ledger_entry_id === 'b3')!.reason, 'subset');
    });

    it('reports a batch whose listed payments do not add up to it as ONE item with the true difference', () => {
      const report = reconcile(movements, [line('batch', '19.00', 'batch-ref', DAY, '0', ['pb1', 'pb2', 'pb3'])], rules);
      const batches = report.items.filter((i) => i.statement_line_id === 'batch');
      assert.equal(batches.length, 1);
      const [b] = batches;
      assert.deepEqual([b.category, b.ledger_entry_id, b.ledger_amount, b.statement_amount, b.movements!.map((m) => m.ledger_entry_id)], ['batch', null, '18.00', '19.00', ['b1', 'b2', 'b3']]);
      assert.equal(report.summary.batch, 1);
    });

    it('makes a payment the batch line lists in another currency an item of its own currency, never summed with the line\'s', () => {
      const pound: LedgerMovement = { ...move('gbp', '20.00', 'pg'), currency: 'GBP' };
      const report = reconcile([move('usd', '5.00', 'pu'), pound], [line('batch', '30.00', 'batch-ref', DAY, '0', ['pu', 'pg'])], rules);
      assert.deepEqual(report.items.map((i) => [i.category, i.currency, i.ledger_entry_id, i.ledger_amount, i.statement_amount, i.field]), [
        ['batch', 'USD', null, '5.00', '30.00', 'amount'],
        ['mismatched', 'GBP', 'gbp', '20.00', null, 'currency'],
      ]);
    });

    it('gives up within its bounds on a line no set of movements adds up to', () => {
      const many = Array.from({ length: 40 }, (_, i) => move(`m${i}`, `${(i + 1) * 2}.00`, `p${i}`));
      const started = Date.now();
      const report = reconcile(many, [line('odd', '41.00', null)], rules); // even amounts never add up to an odd one
      assert.equal(categories(report).odd, 'statement_only');
      assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
    });
  });

  it('settles a batch line against the movements it adds up to, even with one of them missing from the statement', () => {
    const movements = [move('e1', '-5.00', 'p1'), move('e2', '-7.00', 'p2'), move('e3', '-11.00', 'p3'), move('e4', '3.00', 'p4')];
    const report = reconcile(movements, [line('batch', '-16.00', null)], rules);
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

  describe('never wrong, only unsure', () => {
    it('never pairs sides whose references contradict, whatever their amounts and dates', () => {
      // Pay-in A settled, its line missing; the line of pay-in B (never in the ledger) has A's amount.
      const report = reconcile([move('a', '25.00', 'openbank_a')], [line('lb', '25.00', 'openbank_b')], rules);
      assert.deepEqual(report.items.map((i) => [i.ledger_entry_id ?? i.statement_line_id, i.category]), [['a', 'ledger_only'], ['lb', 'statement_only']]);
    });

    it('makes a line without reference that fits two movements ambiguous, listing both, and matches neither', () => {
      const report = reconcile([move('m1', '30.00', 'p1'), move('m2', '30.00', 'p2')], [line('l', '30.00', null)], rules);
      const ambiguous = report.items.find((i) => i.statement_line_id === 'l')!;
      assert.equal(ambiguous.category, 'ambiguous');
      assert.deepEqual(ambiguous.candidates!.map((c) => c.ledger_entry_id).sort(), ['m1', 'm2']);
      assert.equal(report.summary.matched, 0);
    });

    it('makes a line that two different sets add up to ambiguous (60 + 40 and 50 + 50), rather than take the first', () => {
      const report = reconcile([move('a', '60.00', 'pa'), move('b', '40.00', 'pb'), move('c', '50.00', 'pc'), move('d', '50.00', 'pd')], [line('batch', '100.00', null)], rules);
      assert.equal(report.items.find((i) => i.statement_line_id === 'batch')!.category, 'ambiguous');
      assert.equal(report.summary.matched, 0);
    });

    it('does not match a line by amount when a set of movements explains it too', () => {
      const report = reconcile([move('one', '100.00', 'p1'), move('half1', '70.00', 'p2'), move('half2', '30.00', 'p3')], [line('l', '100.00', null)], rules);
      assert.equal(report.summary.matched, 0);
      assert.equal(report.items.find((i) => i.statement_line_id === 'l')!.category, 'ambiguous');
    });

    it('weighs a fee: a line of 97.37 less 0.50 that a payment of 96.87 (its net) and one of 97.37 (its gross) both fit is ambiguous, listing both', () => {
      const report = reconcile([move('net', '96.87', 'p1'), move('gross', '97.37', 'p2')], [line('l', '97.37', null, DAY, '0.50')], rules);
      const item = report.items.find((i) => i.statement_line_id === 'l')!;
      assert.equal(item.category, 'ambiguous');
      assert.deepEqual(item.candidates!.map((c) => c.ledger_entry_id).sort(), ['gross', 'net']);
      assert.equal(report.summary.matched, 0);
      assert.deepEqual(report.items.filter((i) => i.ledger_entry_id !== null).map((i) => i.category), ['ledger_only', 'ledger_only'], 'neither is taken');
    });

    it('makes a line with a fee that the one payment of its gross fits ambiguous, naming it: a pair by amount across a fee is for a person', () => {
      const report = reconcile([move('gross', '97.37', 'p2'), move('other', '5.00', 'p3')], [line('l', '97.37', null, DAY, '0.50')], rules);
      const item = report.items.find((i) => i.statement_line_id === 'l')!;
      assert.deepEqual([item.category, item.candidates!.map((c) => c.ledger_entry_id)], ['ambiguous', ['gross']]);
      assert.equal(report.summary.matched, 0);
    });

    it('matches a line with a fee and the one payment of its net', () => {
      const report = reconcile([move('net', '96.87', 'p1')], [line('l', '97.37', null, DAY, '0.50')], rules);
      assert.deepEqual(report.items.map((i) => [i.category, i.ledger_entry_id, i.reason]), [['matched', 'net', 'amount_and_date']]);
    });

    it('does not match a movement two lines without reference both fit', () => {
      const report = reconcile([move('m', '12.00', 'p1')], [line('l1', '12.00', null), line('l2', '12.00', null)], rules);
      assert.equal(report.summary.matched, 0);
      assert.deepEqual(report.items.filter((i) => i.category === 'ambiguous').map((i) => i.statement_line_id), ['l1', 'l2']);
    });

    it('says how each item matched', () => {
      const report = reconcile(
        [move('r', '1.00', 'pr'), move('a', '2.00', 'pa'), move('s1', '3.00', 'ps1'), move('s2', '4.00', 'ps2')],
        [line('lr', '1.00', 'pr'), line('la', '2.00', null, '2026-11-21'), line('ls', '7.00', null)],
        { ...rules, dateToleranceDays: 0 },
      );
      assert.deepEqual(report.items.map((i) => [i.ledger_entry_id, i.reason]), [['r', 'reference'], ['s1', 'subset'], ['s2', 'subset'], ['a', 'no statement line settles it (partner reference pa)']]);
    });

    it('reports what the budget did not reach as not_examined, never matched', () => {
      const report = reconcile([move('m', '5.00', 'p')], [line('l', '5.00', null)], rules, { steps: 1_000_000, deadline: Date.now() - 1 });
      assert.deepEqual([report.items.find((i) => i.statement_line_id === 'l')!.reason, report.summary.matched, report.not_examined], ['not_examined', 0, 1]);
    });

    it('reports no movement as sure that a line it did not examine may settle: a payment of the line\'s amount among more than the search takes', () => {
      const busy = Array.from({ length: 70 }, (_, i) => move(`b${i}`, '1.00', null));
      const report = reconcile([move('own', '96.34', 'p-own'), ...busy], [line('l', '96.34', null)], rules);
      assert.equal(report.items.find((i) => i.statement_line_id === 'l')!.reason, 'not_examined');
      const own = report.items.find((i) => i.ledger_entry_id === 'own')!;
      assert.deepEqual([own.category, own.candidates!.map((c) => c.statement_line_id)], ['ambiguous', ['l']], 'not ledger_only: its line may be there');
      assert.match(own.reason, /did not examine/);
      assert.ok(!report.items.some((i) => i.category === 'ledger_only'), 'none of the movements the line may explain looks sure');
    });

    it('says so when a bound cuts the subset search short, rather than give up silently', () => {
      const many = Array.from({ length: 80 }, (_, i) => move(`m${i}`, `${i + 1}.00`, `p${i}`));
      const report = reconcile(many, [line('big', '5000.00', null)], rules);
      assert.deepEqual([report.items.find((i) => i.statement_line_id === 'big')!.reason, report.not_examined, report.summary.matched], ['not_examined', 1, 0]);
    });
  });

  it('gives a duplicate line no ledger side, so adjusting it posts the line', () => {
    const report = reconcile([move('e', '10.00', 'p')], [line('first', '10.00', 'p'), line('again', '10.00', 'p')], rules);
    const duplicate = report.items.find((i) => i.statement_line_id === 'again')!;
    assert.deepEqual([duplicate.category, duplicate.ledger_entry_id, duplicate.ledger_amount, duplicate.statement_amount], ['statement_only', null, null, '10.00']);
  });

  it('never matches a side twice across runs: the second line of a payment becomes an exception', () => {
    const book = { movements: new Map<string, string>(), lines: new Set<string>() };
    const tolerant = { ...rules, dateToleranceDays: 1 };
    const m = move('m', '8.00', null);
    const before = line('before', '8.00', null, '2026-11-19');
    const after = line('after', '8.00', null, '2026-11-21');
    const first = reconcileRun([m], [before], { ...tolerant, from: '2026-11-19', to: '2026-11-19' }, book);
    assert.equal(first.summary.matched, 1);
    const second = reconcileRun([m], [after], { ...tolerant, from: '2026-11-21', to: '2026-11-21' }, book);
    assert.deepEqual(second.items.map((i) => [i.statement_line_id, i.category]), [['after', 'statement_only']]);
  });

  it('runs the search in a worker thread, with the same answer', async () => {
    const movements = [move('m1', '30.00', 'p1'), move('m2', '30.00', 'p2'), move('s1', '3.00', 'ps1'), move('s2', '4.00', 'ps2')];
    const lines = [line('l', '30.00', null), line('ls', '7.00', null)];
    const budget = { steps: 1_000_000, deadline: Date.now() + 10_000 };
    const job = jobOf(movements, lines, rules, budget);
    const target = { reconciliationId: 'r1', seqFrom: 7, columns: ['reconciliation_id', 'seq', 'category', 'statement_line_id', 'reason', 'candidates'] };
    // The sides cross as the JSON text Postgres writes, the items come back as COPY text.
    const textJob = { movementsJson: JSON.stringify(job.movements), linesJson: JSON.stringify(job.lines), rules: job.rules, budget, graceMs: 10_000, target };
    const inWorker = await searchInWorker(textJob);
    const here = runJob(job);
    assert.deepEqual(inWorker, { copy: itemsCopy(here.items, target), count: here.items.length, notExamined: here.notExamined });
    assert.deepEqual(here.items.map((i) => i.category).sort(), ['ambiguous', 'ledger_only', 'ledger_only', 'matched', 'matched']);
    const rows = inWorker.copy.trimEnd().split('\n').map((row) => row.split('\t'));
    assert.deepEqual(rows.map((row) => row.slice(0, 2)), here.items.map((_, i) => ['r1', String(7 + i)]), 'each item a row of its run, numbered from seqFrom');
    // A worker not done by its deadline plus its grace is stopped: no answer, the run reports every leftover alone.
    assert.equal(await searchInWorker({ ...textJob, budget: { ...budget, deadline: Date.now() - 1 }, graceMs: 0 }), null);
  });
});
