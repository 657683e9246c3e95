// A match that lasts, and an adjustment undone exactly once (issue 49, items 1, 2, 4 and 5), on a
// service of its own: a line whose amount the partner wrote short ("97.4", "100") matched by hand
// stays matched in the next run; a bank line matched to one payment stays matched to it when the
// day is exported again (other ids, one line more, CRLF), however many payments of its amount
// settle meanwhile; a movement chosen by hand for one ambiguous line is refused for another, 409
// `already_matched`, and that line stays open. When the missing side of an adjusted exception
// arrives (a batch's last payment, the payments a line's amount is the sum of, a line net of a
// fee), exactly the adjustment is reversed, once, on the settlement account it was posted to.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money, type Amount } from '../../ledger/money';
import { up as rewriteFingerprints } from '../../migrations/20261201090000_canonical_line_fingerprints';
import { expectError } from '../support/expect';
import { FinanceDesk } from '../support/finance-desk';
import { call } from '../support/http';
import { daysAfter, today } from '../support/days';

interface Item { category: string; currency: string; ledger_amount: string | null; statement_amount: string | null; statement_line_id: string | null; ledger_entry_id: string | null; reference: string | null; reason: string }
interface Exception { id: string; category: string; status: string; ledger_entry_id: string | null; statement_line_id: string | null; reference: string | null }

describe('reconciliation: a match lasts, and an adjustment is undone exactly once', function () {
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
    await desk.settledPayIn('55.10', 'statement_missing');
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

  /**
   * What an adjusting entry moved on the settlement account, as statement − ledger: the account's
   * posting negated (the partner owes us what it holds: a line the ledger lacks is a debit to it).
   */
  const settlementPosting = async (entryId: string, currency = 'USD'): Promise<Amount> => new Money((await desk.service.runtime.db.raw(
    `SELECT p.amount::text AS amount FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id WHERE p.entry_id = ? AND la.code = ?`, [entryId, `sys:partner:openbank:${currency}`])).rows[0].amount).negated();
  /** Resolves `id` adjusted and returns what its entry moved on the settlement account (statement − ledger). */
  const adjust = async (id: string, currency = 'USD'): Promise<Amount> => {
    const adjusted = await resolve(id, { resolution: 'adjusted', note: 'as the statement says' });
    assert.equal(adjusted.status, 200, JSON.stringify(adjusted.body));
    return settlementPosting(adjusted.body.adjustment_entry_id, currency);
  };
  const reversalOf = async (id: string): Promise<Exception & { ledger_amount: string; statement_amount: string }> => {
    const reversals = (await open()).filter((e) => (e as unknown as { reverses_exception_id: string | null }).reverses_exception_id === id);
    assert.equal(reversals.length, 1, `one reversal of ${id}`);
    return reversals[0] as Exception & { ledger_amount: string; statement_amount: string };
  };

  it('reverses exactly a batch\'s adjustment once its last payment reaches the ledger and the line adds up', async () => {
    const day = daysAfter(today(), 4);
    const paid = [await desk.settledPayIn('40.00', 'statement_missing'), await desk.settledPayIn('50.00', 'statement_missing')];
    const batchLine = (third: string) => `id,reference,amount,currency,value_date,settles\nb,batch-4,111.11,USD,${day},${paid[0].external_id} ${paid[1].external_id} ${third}\n`;
    await reconcile({ from: day, to: day, statement_csv: batchLine(`openbank_${randomUUID().replaceAll('-', '')}`) });
    const batch = (await open()).find((e) => e.category === 'batch' && e.reference === 'batch-4')!;
    assert.deepEqual([(batch as unknown as { ledger_amount: string }).ledger_amount, (batch as unknown as { statement_amount: string }).statement_amount], ['90.00', '111.11']);
    const first = await adjust(batch.id);
    assert.equal(first.toFixed(2), '21.11');
    const third = await desk.settledPayIn('21.11', 'statement_missing');
    const again = await reconcile({ from: day, to: day, statement_csv: batchLine(third.external_id) });
    assert.ok(again.items.filter((i) => i.category === 'matched' && i.reference !== null && [...paid, third].some((p) => p.external_id === i.reference)).length === 3, JSON.stringify(again.items));
    const reversal = await reversalOf(batch.id);
    assert.deepEqual([reversal.category, reversal.ledger_amount, reversal.statement_amount], ['mismatched', '132.22', '111.11']);
    assert.equal(first.plus(await adjust(reversal.id)).toFixed(2), '0.00', 'the adjustment and its reversal cancel');
    assert.equal((await reconcile({ from: day, to: day, statement_csv: batchLine(third.external_id) })).exceptions.opened, 0, 'reversed once');
  });

  it('reverses a line\'s whole adjustment when a later run finds the payments its amount is the sum of, not one of them', async () => {
    const day = daysAfter(today(), 5);
    const csv = `id,reference,amount,currency,value_date\ns,,35.79,USD,${day}\n`;
    await reconcile({ from: day, to: day, statement_csv: csv, date_tolerance_days: 5 });
    const alone = (await open()).find((e) => e.category === 'statement_only' && (e as unknown as { statement_amount: string }).statement_amount === '35.79')!;
    const first = await adjust(alone.id);
    assert.equal(first.toFixed(2), '35.79');
    await desk.settledPayIn('12.34', 'statement_missing');
    await desk.settledPayIn('23.45', 'statement_missing');
    const again = await reconcile({ from: day, to: day, statement_csv: csv, date_tolerance_days: 5 });
    assert.deepEqual(again.items.filter((i) => i.statement_line_id === alone.statement_line_id).map((i) => [i.category, i.reason.split(';')[0]]), [['matched', 'subset'], ['matched', 'subset']]);
    const reversal = await reversalOf(alone.id);
    assert.deepEqual([reversal.ledger_amount, reversal.statement_amount], ['71.58', '35.79']);
    assert.equal(first.plus(await adjust(reversal.id)).toFixed(2), '0.00', 'the whole adjustment is reversed, not the first payment of the subset');
  });

  it('reverses a missing line\'s adjustment once the line comes net of a fee, and leaves the fee to its own exception: no cent counted twice', async () => {
    const day = daysAfter(today(), 6);
    const payIn = await desk.settledPayIn('61.00', 'statement_missing');
    await reconcile({ from: today(), to: today() });
    const alone = await entryOf(payIn.external_id);
    const first = await adjust(alone.id);
    assert.equal(first.toFixed(2), '-61.00');
    const arrived = await reconcile({ from: day, to: day, statement_csv: `id,reference,amount,fee,currency,value_date\nf,${payIn.external_id},61.00,0.50,USD,${day}\n`, date_tolerance_days: 6 });
    assert.deepEqual(arrived.items.filter((i) => i.reference === payIn.external_id).map((i) => i.category), ['mismatched']);
    const reversal = await reversalOf(alone.id);
    const fee = (await open()).find((e) => e.category === 'mismatched' && e.reference === payIn.external_id && (e as unknown as { reverses_exception_id: string | null }).reverses_exception_id === null)!;
    assert.ok(fee, 'the fee is an exception of its own');
    const total = first.plus(await adjust(reversal.id)).plus(await adjust(fee.id));
    assert.equal(total.toFixed(2), '-0.50', 'the partner kept 0.50: that, and only that, is adjusted in the end');
  });

  it('keeps an open batch exception to its line as the line grows: both its sides are the latest run\'s, and a payment it lists later is the batch\'s alone', async () => {
    const day = daysAfter(today(), 7);
    const paid = [await desk.settledPayIn('70.00', 'statement_missing'), await desk.settledPayIn('80.00', 'statement_missing')];
    const ghost = () => `openbank_${randomUUID().replaceAll('-', '')}`;
    const batchLine = (amount: string, listed: string[]) => `id,reference,amount,currency,value_date,settles\nb,batch-7,${amount},USD,${day},${listed.join(' ')}\n`;
    // A run of the pay-ins' own day, before any statement lists them: each is reported alone.
    await reconcile({ from: today(), to: today(), statement_csv: `id,reference,amount,currency,value_date\nx,elsewhere-7,0.01,USD,${today()}\n` });
    const alone = await entryOf(paid[1].external_id);
    await reconcile({ from: day, to: day, statement_csv: batchLine('100.00', [paid[0].external_id, ghost()]) });
    const batch = (await open()).find((e) => e.category === 'batch' && e.reference === 'batch-7')!;
    assert.deepEqual([(batch as unknown as { ledger_amount: string }).ledger_amount, (batch as unknown as { statement_amount: string }).statement_amount], ['70.00', '100.00']);
    await reconcile({ from: day, to: day, statement_csv: batchLine('190.00', [paid[0].external_id, paid[1].external_id, ghost()]) });
    const grown = (await call(base(), 'GET', `/v1/reconciliation-exceptions/${batch.id}`, undefined, { token: master() })).body;
    assert.deepEqual([grown.status, grown.ledger_amount, grown.statement_amount, grown.movements.length], ['open', '150.00', '190.00', 2]);
    // Its exception alone closes: adjusting it and the batch would take the 80.00 off the books twice.
    const closed = (await call(base(), 'GET', `/v1/reconciliation-exceptions/${alone.id}`, undefined, { token: master() })).body;
    assert.deepEqual([closed.status, closed.resolution], ['resolved', 'explained'], JSON.stringify(closed));
    assert.match(closed.note, /listed by a batch line/);
    assert.ok(!(await open()).some((e) => e.category === 'ledger_only' && e.reference === paid[1].external_id), 'the payment is in one open exception, the batch\'s');
    assert.equal(await adjust(batch.id).then((posted) => posted.toFixed(2)), '40.00', 'the difference as it stands');
  });

  it('reverses the adjustment of a payment adjusted alone once a batch line lists it, so adjusting the batch does not take it off twice', async () => {
    const day = daysAfter(today(), 6); // within the reach of a reference (LOOKAROUND_DAYS)
    const paid = [await desk.settledPayIn('70.00', 'statement_missing'), await desk.settledPayIn('80.00', 'statement_missing')];
    // A run of the pay-ins' own day: each reported alone; finance adjusts the 80.00 as missing.
    await reconcile({ from: today(), to: today(), statement_csv: `id,reference,amount,currency,value_date\nx,elsewhere-8,0.01,USD,${today()}\n` });
    const alone = await entryOf(paid[1].external_id);
    const first = await adjust(alone.id);
    assert.equal(first.toFixed(2), '-80.00');
    // The partner's batch, still going on, lists both with a third payment the ledger never had.
    const line = `id,reference,amount,currency,value_date,settles\nb,batch-8,190.00,USD,${day},${paid[0].external_id} ${paid[1].external_id} openbank_${randomUUID().replaceAll('-', '')}\n`;
    await reconcile({ from: day, to: day, statement_csv: line });
    const batch = (await open()).find((e) => e.category === 'batch' && e.reference === 'batch-8')!;
    assert.deepEqual([(batch as unknown as { ledger_amount: string }).ledger_amount, (batch as unknown as { statement_amount: string }).statement_amount], ['150.00', '190.00']);
    const reversal = await reversalOf(alone.id);
    assert.equal(new Money(reversal.statement_amount).minus(reversal.ledger_amount).toFixed(2), '80.00', 'the reversal undoes exactly the adjustment');
    await reconcile({ from: day, to: day, statement_csv: line });
    await reversalOf(alone.id); // still one, however often the day is reconciled
    const total = first.plus(await adjust(reversal.id)).plus(await adjust(batch.id));
    assert.equal(total.toFixed(2), '40.00', 'in the end the statement\'s 190.00 less the ledger\'s 150.00, the 80.00 counted once');
  });

  it('keeps a payment a batch line lists in another currency apart: an item in its own currency, each adjusted on its own account, never one mixed amount', async () => {
    const day = daysAfter(today(), 1); // its payment is found through its reference only this near (LOOKAROUND_DAYS)
    const gbp = await desk.settledPayIn('20.00', 'statement_missing', 'GBP');
    const csv = `id,reference,amount,currency,value_date,settles\nb,batch-8,23.00,EUR,${day},${gbp.external_id}\n`;
    const report = await reconcile({ from: day, to: day, statement_csv: csv });
    const shown = report.items.filter((i) => i.reference === 'batch-8' || i.reference === gbp.external_id).map((i) => [i.category, i.currency, i.ledger_amount, i.statement_amount]);
    assert.deepEqual(shown, [['batch', 'EUR', '0.00', '23.00'], ['mismatched', 'GBP', '20.00', null]], JSON.stringify(report.items));
    const queue = await open();
    const batch = queue.find((e) => e.category === 'batch' && e.reference === 'batch-8')!;
    const currency = queue.find((e) => e.category === 'mismatched' && e.reference === gbp.external_id)!;
    assert.equal((currency as unknown as { field: string }).field, 'currency');
    assert.equal((await adjust(batch.id, 'EUR')).toFixed(2), '23.00', 'the euros the partner holds, on the EUR account');
    assert.equal((await adjust(currency.id, 'GBP')).toFixed(2), '-20.00', 'the pounds its statement lacks, on the GBP account');
    const again = await reconcile({ from: day, to: day, statement_csv: csv });
    assert.equal(again.exceptions.opened, 0, 'nothing opens again, nothing is reversed');
  });

  it('matches a line ambiguous between sets (60 + 40 or 50 + 50) by hand with the set named, and keeps that match in the next run', async () => {
    const day = daysAfter(today(), 2);
    const amounts = ['60.11', '40.22', '50.11', '50.22'];
    const payIns = [];
    for (const amount of amounts) payIns.push(await desk.settledPayIn(amount, 'statement_missing'));
    await reconcile({ from: today(), to: today() });
    const [m60, m40, m50a, m50b] = await Promise.all(payIns.map(async (p) => (await entryOf(p.external_id)).ledger_entry_id!));
    const csv = `id,reference,amount,currency,value_date\nsum,,100.33,USD,${day}\n`;
    await reconcile({ from: day, to: day, statement_csv: csv, date_tolerance_days: 2 });
    const ambiguous = (await open()).find((e) => e.category === 'ambiguous' && (e as unknown as { statement_amount: string }).statement_amount === '100.33')!;
    assert.ok(ambiguous, 'the line is ambiguous');
    const set = (ids: string[], extra: Record<string, unknown> = {}) => resolve(ambiguous.id, { resolution: 'matched', note: 'the bank listed them', ledger_entry_ids: ids, ...extra });
    expectError(await set([m60, m50a]), 422, 'exception_pair_mismatch', 'amount', 'a set that does not add up');
    expectError(await set([m60, randomUUID()]), 422, 'exception_pair_mismatch', 'ledger_entry_ids', 'a set with an entry that is no candidate');
    expectError(await set([m60, m40], { ledger_entry_id: m60 }), 400, 'invalid_request', 'ledger_entry_ids', 'a set and a side besides');
    expectError(await set([m60]), 400, 'invalid_request', 'ledger_entry_ids', 'a set of one');
    const matched = await set([m60, m40]);
    assert.equal(matched.status, 200, JSON.stringify(matched.body));
    assert.deepEqual([matched.body.status, matched.body.resolution], ['resolved', 'matched']);
    const stillOpen = (await open()).filter((e) => e.category === 'ledger_only' && [m60, m40, m50a, m50b].includes(e.ledger_entry_id ?? '')).map((e) => e.ledger_entry_id).sort();
    assert.deepEqual(stillOpen, [m50a, m50b].sort(), 'the chosen entries close with the line; the others stay alone');
    const again = await reconcile({ from: day, to: day, statement_csv: csv, date_tolerance_days: 2 });
    const rows = again.items.filter((i) => i.statement_line_id === ambiguous.statement_line_id);
    assert.deepEqual(rows.map((i) => [i.category, i.ledger_entry_id, i.reason.split(';')[0]]).sort(), [['matched', m60, 'by_hand'], ['matched', m40, 'by_hand']].sort());
  });

  it('keeps the matches recorded before amounts were canonical: the migration rewrites their fingerprints at the currency\'s scale', async () => {
    const day = daysAfter(today(), 5);
    await desk.settledPayIn('44.40', 'statement_missing');
    await reconcile({ from: today(), to: today() });
    const csv = `id,reference,amount,currency,value_date\nm,,44.4,USD,${day}\n`;
    const first = await reconcile({ from: day, to: day, statement_csv: csv, date_tolerance_days: 5 });
    const line = first.items.find((i) => i.category === 'matched' && i.statement_amount === '44.40');
    assert.ok(line?.statement_line_id, JSON.stringify(first.items));
    const { db } = desk.service.runtime;
    const recorded = () => db('reconciliation_matched_lines').where({ partner: 'openbank', statement_line_id: line.statement_line_id }).first('fingerprint');
    const canonical = (await recorded()).fingerprint as string;
    assert.match(canonical, /^44\.40\|/);
    // As the code before it recorded it: the amount in its shortest form.
    await db('reconciliation_matched_lines').where({ partner: 'openbank', statement_line_id: line.statement_line_id }).update({ fingerprint: canonical.replace(/^44\.40/, '44.4') });
    await rewriteFingerprints(db);
    assert.equal((await recorded()).fingerprint, canonical, 'rewritten at the scale of USD');
    const again = await reconcile({ from: day, to: day, statement_csv: csv, date_tolerance_days: 5 });
    assert.deepEqual(again.items.filter((i) => i.statement_line_id === line.statement_line_id).map((i) => [i.category, i.ledger_entry_id]), [['matched', line.ledger_entry_id]]);
    assert.equal(again.exceptions.opened, 0, 'the match stands: nothing reopens');
  });
});
