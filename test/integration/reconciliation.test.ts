// Reconciliation against partner statements (DESIGN.md section 5e), on a service of its own (its
// own database, topics and mock rails), so that its days hold only what this test made: a clean
// day reconciles with no exception, each statement scenario produces its category exactly once,
// uploads and dry runs behave, the schedule reconciles each partner's previous day once, and
// 100,000 entries are exported and reconciled in bounded memory.
import assert from 'node:assert/strict';
import type { SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { FinanceDesk } from '../support/finance-desk';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { seedSettledPayIns, seededStatementCsv } from '../support/seed-ledger';
import type { TestService } from '../support/service';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { startMockRailsRole } from '../../src/mock-rails/role';
import { PARTNER_LINK_CALLBACK_PATH } from '../../src/partners/registry';
import { daysAfter, today } from '../support/days';
import { Reconciliations } from '../../src/reconciliation/reports';


describe('reconciliation against partner statements', function () {
  this.timeout(240_000);
  const desk = new FinanceDesk('finance');
  let service: TestService;
  let owner: SignedUp;
  let customerId: string;
  /** Operator events read back from domain.events, by resource id. */
  const announced = new Map<string, DomainEventEnvelope>();
  const base = () => service.baseUrl;
  const master = () => service.config.masterKey;
  const settledPayIn = (amount: string, scenario?: string) => desk.settledPayIn(amount, scenario);

  before(async () => {
    await desk.start({ RECONCILIATION_CHECK_MS: '300', PAYMENT_SETTLE_INTERVAL_MS: '100' }, (event: DomainEventEnvelope) => { if (event.account_id === null) announced.set(event.resource_id, event); });
    ({ service, owner, customerId } = desk);
  });
  after(() => desk.stop());

  const reconcile = (body: Record<string, unknown>) => call(base(), 'POST', '/v1/reconciliations', { partner: 'openbank', from: today(), to: today(), ...body }, { token: master() });
  const entryOf = async (paymentId: string) => (await service.runtime.db('journal_entries').where({ payment_id: paymentId, kind: 'payment_settle' }).first('id')).id;

  it('reconciles each partner\'s previous day on the schedule, once', async () => {
    const scheduled = await eventually(async () => {
      const list = await call(base(), 'GET', '/v1/reconciliations?limit=50', undefined, { token: master() });
      const ours = list.body.data.filter((r: { trigger: string }) => r.trigger === 'schedule');
      return ours.length === 4 ? ours : undefined;
    }, 30_000, 'a scheduled report per partner');
    const yesterday = daysAfter(today(), -1);
    assert.deepEqual(scheduled.map((r: { partner: string }) => r.partner).sort(), ['chain', 'claimless', 'fiat', 'openbank']);
    for (const report of scheduled) {
      assert.deepEqual([report.from, report.to, report.source], [yesterday, yesterday, 'partner']);
      assert.deepEqual(report.summary, { matched: 0, ledger_only: 0, statement_only: 0, mismatched: 0, ambiguous: 0, batch: 0 }, 'nothing moved yesterday');
    }
    await new Promise((resolve) => setTimeout(resolve, 1000)); // more checks
    const again = await service.runtime.db('reconciliations').where('trigger', 'schedule').count({ n: '*' });
    assert.equal(Number(again[0].n), 4, 'a day is reconciled once, however many checks run');
  });

  it('reconciles a clean day with zero exceptions, and announces it', async () => {
    const payments = [await settledPayIn('11.00'), await settledPayIn('12.00'), await settledPayIn('13.00')];
    const report = await reconcile({});
    assert.equal(report.status, 201, JSON.stringify(report.body));
    assert.deepEqual(report.body.summary, { matched: 3, ledger_only: 0, statement_only: 0, mismatched: 0, ambiguous: 0, batch: 0 });
    assert.deepEqual(report.body.items, []);
    assert.deepEqual(report.body.totals, [{ currency: 'USD', ledger: '36.00', statement: '36.00', matched: '36.00', difference: '0.00' }]);
    const csv = await fetch(`${base()}/v1/reconciliations/${report.body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } });
    const rows = (await csv.text()).trim().split('\n');
    assert.equal(rows.length, 4, 'the CSV lists the matched items too');
    for (const p of payments) assert.ok(rows.some((row) => row.startsWith('matched,') && row.includes(p.external_id)), `${p.external_id} is matched`);

    // The event reaches domain.events, decoded by its registered schema, outside every account's sequence.
    const event = await eventually(async () => announced.get(report.body.id), 10_000, 'the reconciliation.completed event on Kafka');
    assert.equal(event.type, 'reconciliation.completed');
    assert.equal(event.account_id, null);
    assert.equal(event.account_seq, 0);
    assert.deepEqual(JSON.parse(event.data.attributes!), {
      partner: 'openbank', from: today(), to: today(), trigger: 'api', source: 'partner', matched: 3, ledger_only: 0, statement_only: 0, mismatched: 0, ambiguous: 0, batch: 0, not_examined: 0, exceptions_opened: 0, exceptions_resolved: 0,
    });
    await eventually(async () => ((await service.runtime.db('outbox_rounds').count({ n: '*' }).first())?.n === '0' ? true : undefined), 10_000, 'every round published');
  });

  it('reports each statement scenario in its category, exactly once, naming the entry, the line and the field', async () => {
    const missing = await settledPayIn('21.00', 'statement_missing');
    const duplicate = await settledPayIn('22.00', 'statement_duplicate');
    const fee = await settledPayIn('23.00', 'statement_fee');
    const late = await settledPayIn('24.00', 'statement_late');
    const batched = [await settledPayIn('25.00', 'statement_batched'), await settledPayIn('26.00', 'statement_batched')];
    const report = await reconcile({});
    assert.equal(report.status, 201, JSON.stringify(report.body));
    assert.deepEqual(report.body.summary, { matched: 3 + 1 + 2, ledger_only: 2, statement_only: 1, mismatched: 1, ambiguous: 0, batch: 0 }, JSON.stringify(report.body.items));
    const about = (reference: string) => report.body.items.filter((i: { reference: string }) => i.reference === reference);

    const [lost] = about(missing.external_id);
    assert.deepEqual([about(missing.external_id).length, lost.category, lost.ledger_entry_id, lost.statement_line_id, lost.ledger_amount], [1, 'ledger_only', await entryOf(missing.id), null, '21.00']);
    assert.equal(lost.reason, `no statement line settles it (partner reference ${missing.external_id})`);
    const [twice] = about(duplicate.external_id);
    assert.deepEqual([about(duplicate.external_id).length, twice.category, twice.field, twice.ledger_entry_id, twice.statement_line_id],
      [1, 'statement_only', 'reference', null, `stl_${duplicate.external_id}_2`]);
    assert.deepEqual([twice.ledger_amount, twice.statement_amount], [null, '22.00'], 'a duplicate line has no ledger side: adjusting it posts the line');
    const [charged] = about(fee.external_id);
    assert.deepEqual([about(fee.external_id).length, charged.category, charged.field, charged.ledger_value, charged.statement_value, charged.ledger_amount, charged.statement_amount],
      [1, 'mismatched', 'fee', '0.00', '0.50', '23.00', '22.50']);
    // The late line's day is beyond the date tolerance: today the movement is alone, and the run of
    // the line's day pairs them by reference, naming the value date.
    const [delayed] = about(late.external_id);
    assert.deepEqual([about(late.external_id).length, delayed.category, delayed.statement_line_id, delayed.ledger_entry_id], [1, 'ledger_only', null, await entryOf(late.id)]);
    const lateDay = daysAfter(today(), 3);
    const ofLateDay = await reconcile({ from: lateDay, to: lateDay, dry_run: true });
    assert.equal(ofLateDay.status, 200, JSON.stringify(ofLateDay.body));
    const paired = ofLateDay.body.items.filter((i: { reference: string }) => i.reference === late.external_id);
    assert.deepEqual(paired.map((i: Record<string, string>) => [i.category, i.field, i.ledger_value, i.statement_value, i.ledger_entry_id]),
      [['mismatched', 'value_date', today(), lateDay, await entryOf(late.id)]]);
    assert.equal(report.body.items.length, 4, 'the batched payments are matched, not exceptions');

    const csv = await (await fetch(`${base()}/v1/reconciliations/${report.body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } })).text();
    const batchRows = csv.split('\n').filter((row) => row.includes('stl_batch_'));
    assert.equal(batchRows.length, 2, 'one matched item per batched payment, both on the batch line');
    for (const p of batched) assert.ok(batchRows.some((row) => row.includes(p.external_id)));

    const stored = await call(base(), 'GET', `/v1/reconciliations/${report.body.id}`, undefined, { token: master() });
    assert.deepEqual(stored.body, report.body, 'the stored report reads back as it was answered');
    const tolerant = await reconcile({ dry_run: true, amount_tolerance: '0.50', date_tolerance_days: 3 });
    assert.equal(tolerant.status, 200);
    assert.deepEqual([tolerant.body.dry_run, tolerant.body.summary], [true, { matched: 3 + 1 + 1 + 1 + 2, ledger_only: 1, statement_only: 1, mismatched: 0, ambiguous: 0, batch: 0 }], 'within the tolerances the fee and the date match');
    expectError(await call(base(), 'GET', `/v1/reconciliations/${tolerant.body.id}`, undefined, { token: master() }), 404, 'reconciliation_not_found', 'id', 'a dry run is not stored');
    assert.deepEqual(await violations(service.runtime.db), {});
  });

  it('reconciles an uploaded CSV statement, and refuses a malformed one with the line and nothing stored', async () => {
    const paid = await settledPayIn('31.00');
    const csv = `id,reference,amount,fee,currency,value_date\nup-1,${paid.external_id},31.00,0.00,USD,${today()}\nup-2,"unknown, quoted",-5.00,0,USD,${today()}\n`;
    const report = await reconcile({ statement_csv: csv });
    assert.equal(report.status, 201, JSON.stringify(report.body));
    assert.equal(report.body.source, 'upload');
    const stranger = report.body.items.find((i: { reference: string | null }) => i.reference === 'unknown, quoted');
    assert.match(stranger.statement_line_id, /^upload-[0-9a-f]{16}:1$/, 'an uploaded line is named by its content');
    assert.deepEqual([stranger.category, stranger.reference, stranger.statement_amount], ['statement_only', 'unknown, quoted', '-5.00']);
    assert.ok(!report.body.items.some((i: { reference: string }) => i.reference === paid.external_id), 'the uploaded line matched its payment');

    const before = await service.runtime.db('reconciliations').count({ n: '*' });
    for (const [bad, message] of [
      ['id,reference,amount\nx,y,1.00\n', /lacks currency, value_date/],
      [`id,reference,amount,currency,value_date\nx,y,1.001,USD,${today()}\n`, /line 2: amount has more than the 2 decimals/],
      [`id,reference,amount,currency,value_date\nx,y,1.00,USD,2026-02-30\n`, /line 2: value_date/],
      [`id,reference,amount,currency,value_date\nx,y,1.00,USD,2026-13-45\n`, /line 2: value_date/],
      [`id,reference,amount,currency,value_date\nx,y,1.00,USD,${today()}\nx,z,2.00,USD,${today()}\n`, /line 3: id must be present and unique/],
    ] as const) {
      const refused = await reconcile({ statement_csv: bad });
      expectError(refused, 400, 'invalid_request', 'statement_csv');
      assert.match(refused.body.message, message);
    }
    expectError(await reconcile({ from: today(), to: '2020-01-01' }), 400, 'invalid_request', 'from');
    expectError(await reconcile({ from: '2026-13-45' }), 400, 'invalid_request', 'from');
    expectError(await reconcile({ from: '2026-01-01', to: '2026-03-01' }), 400, 'invalid_request', 'to');
    expectError(await reconcile({ partner: 'nobank' }), 400, 'invalid_request');
    expectError(await call(base(), 'POST', '/v1/reconciliations', { partner: 'openbank', from: today(), to: today() }, { token: owner.key }), 403, 'insufficient_scope');
    assert.deepEqual(await service.runtime.db('reconciliations').count({ n: '*' }), before, 'nothing stored');
  });

  it('reports every leftover alone, its lines not_examined, when the search does not finish in time: never a match', async () => {
    const day = daysAfter(today(), 7); // a day of this upload alone
    const csv = `id,reference,amount,currency,value_date\nslow-1,,7.00,USD,${day}\nslow-2,,9.50,USD,${day}\n`;
    // A budget spent before the worker starts, and no grace: the run does not wait for its answer.
    const stopped = new Reconciliations(service.runtime, () => { throw new Error('an upload asks no partner'); }, { steps: 1_000_000, ms: 0, graceMs: 0 });
    const report = await stopped.run({ partner: 'openbank', from: day, to: day, dryRun: true, amountTolerance: '0.00', dateToleranceDays: 0, statementCsv: csv, trigger: 'api' });
    assert.ok(report);
    assert.equal(report.not_examined, 2);
    assert.deepEqual(report.items.map((i) => [i.category, i.statement_amount, i.reason]),
      [['statement_only', '7.00', 'not_examined'], ['statement_only', '9.50', 'not_examined']]);
    assert.deepEqual(report.summary, { matched: 0, ledger_only: 0, statement_only: 2, mismatched: 0, ambiguous: 0, batch: 0 });
  });

  it('reports a movement a line not examined may settle as unsure, naming the line, when the search does not finish in time', async () => {
    const paid = await settledPayIn('77.71', 'statement_missing');
    const csv = `id,reference,amount,currency,value_date\nu-1,,77.71,USD,${today()}\n`;
    const stopped = new Reconciliations(service.runtime, () => { throw new Error('an upload asks no partner'); }, { steps: 1_000_000, ms: 0, graceMs: 0 });
    const report = await stopped.run({ partner: 'openbank', from: today(), to: today(), dryRun: true, amountTolerance: '0.00', dateToleranceDays: 0, statementCsv: csv, trigger: 'api' });
    assert.ok(report);
    const line = report.items.find((i) => i.statement_amount === '77.71' && i.ledger_entry_id === null)!;
    assert.equal(line.reason, 'not_examined');
    const own = report.items.find((i) => i.reference === paid.external_id)!;
    assert.deepEqual([own.category, own.candidates?.map((c) => c.statement_line_id)], ['ambiguous', [line.statement_line_id]], 'not a sure ledger_only: its line may be there');
    assert.match(own.reason, /1 statement line the search did not examine/);
  });

  it('takes from and to as calendar dates or as ISO 8601 instants (their UTC day), and says which forms it takes', async () => {
    const byDates = await reconcile({ dry_run: true });
    const byInstants = await reconcile({ from: `${today()}T08:15:00Z`, to: `${today()}T23:59:59.999+00:00`, dry_run: true });
    assert.equal(byInstants.status, 200, JSON.stringify(byInstants.body));
    assert.deepEqual([byInstants.body.from, byInstants.body.to, byInstants.body.summary], [today(), today(), byDates.body.summary]);
    for (const [field, value] of [['from', 'yesterday'], ['to', '24/11/2026'], ['from', '2026-11-24 10:00']]) {
      const refused = await reconcile({ [field]: value });
      expectError(refused, 400, 'invalid_request', field, `${field}=${value}`);
      assert.match(refused.body.message, /a calendar date \(YYYY-MM-DD\), or an ISO 8601 instant taken as its UTC day/);
    }
    expectError(await reconcile({ from: '2026-02-30' }), 400, 'invalid_request', 'from');
  });

  it('matches a batch line by the payments it lists, on a day with other unmatched movements, the same on every run', async () => {
    const missing = [await settledPayIn('51.00', 'statement_missing'), await settledPayIn('52.00', 'statement_missing')];
    const batched = [await settledPayIn('53.00', 'statement_batched'), await settledPayIn('54.00', 'statement_batched'), await settledPayIn('55.00', 'statement_batched')];
    for (let run = 1; run <= 2; run += 1) {
      const report = await reconcile({ dry_run: true });
      assert.equal(report.status, 200, JSON.stringify(report.body));
      const itemOf = (external: string) => report.body.items.find((i: { reference: string }) => i.reference === external);
      for (const p of missing) assert.equal(itemOf(p.external_id)?.category, 'ledger_only', `run ${run}: ${p.external_id} is left off the statement`);
      for (const p of batched) assert.equal(itemOf(p.external_id), undefined, `run ${run}: ${p.external_id} is matched, not an exception`);
      assert.ok(!report.body.items.some((i: { category: string; statement_line_id: string | null }) => i.category === 'statement_only' && i.statement_line_id?.startsWith('stl_batch_')), `run ${run}: the batch line is matched`);
    }
    const csv = await (await fetch(`${base()}/v1/reconciliations/${(await reconcile({})).body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } })).text();
    for (const p of batched) assert.match(csv.split('\n').find((row) => row.includes(p.external_id)) ?? '', /,reference\r?$/, `${p.external_id} says how it matched`);
  });

  it('reconciles a day the same after the partners restart (they keep their books), and nothing while they are away', async () => {
    const paid = await settledPayIn('41.00');
    const before = await reconcile({ dry_run: true });
    assert.equal(before.status, 200, JSON.stringify(before.body));
    assert.ok(before.body.items.every((i: { reference: string }) => i.reference !== paid.external_id), 'the pay-in is matched');

    const index = service.roles.findIndex((r) => r.role === 'mock-rails');
    const port = new URL(service.roles[index].url!).port;
    await service.roles[index].stop();
    // While the partner is away, a run that cannot read its statements (the days around the
    // range are read at once) answers 503 and stores nothing.
    const storedIds = async () => (await call(base(), 'GET', '/v1/reconciliations?limit=100', undefined, { token: master() })).body.data.map((r: { id: string }) => r.id);
    const stored = await storedIds();
    expectError(await reconcile({ date_tolerance_days: 2 }), 503, 'partner_unavailable');
    assert.deepEqual(await storedIds(), stored, 'nothing stored');
    const restarted = await startMockRailsRole({ ...service.runtime, config: { ...service.config, mockRailsPort: Number(port) } });
    service.roles[index] = restarted;
    restarted.rails.registerRedirectUri(`${base()}${PARTNER_LINK_CALLBACK_PATH}`);

    const after = await reconcile({ dry_run: true });
    assert.equal(after.status, 200, JSON.stringify(after.body));
    const comparable = (report: { summary: unknown; totals: unknown; items: Array<Record<string, unknown>> }) => ({ summary: report.summary, totals: report.totals, items: report.items.map(({ id: _, ...item }) => item) });
    assert.deepEqual(comparable(after.body), comparable(before.body), 'the same statement, so the same report');
    const next = await settledPayIn('42.00');
    const later = await reconcile({ dry_run: true });
    assert.deepEqual(later.body.summary, { ...before.body.summary, matched: before.body.summary.matched + 1 }, `${next.external_id}: payments after the restart settle and match too`);
  });

  it('exports and reconciles 100,000 entries in bounded memory @system', async () => {
    const day = '2026-01-15';
    const count = 100_000;
    const seeded = await seedSettledPayIns(service.runtime.db, owner.account.id, customerId, count, day, 'bulk');
    // What the process holds, not garbage it has yet to collect: the heap after a full collection
    // (mocha runs node with --expose-gc), sampled while the export streams: every half second, as
    // collections every 100 ms doubled the export's time without finding a higher peak.
    const retained = () => { (globalThis as { gc?: () => void }).gc?.(); return process.memoryUsage().heapUsed; };
    assert.ok((globalThis as { gc?: () => void }).gc, 'node runs with --expose-gc');
    const baseline = retained();
    let peak = baseline;
    const sampler = setInterval(() => { peak = Math.max(peak, retained()); }, 500);
    try {
      const response = await fetch(`${base()}/v1/ledger/journal?from=${day}T00:00:00Z&to=${day}T23:59:59Z`, { headers: { authorization: `Bearer ${master()}` } });
      assert.equal(response.status, 200);
      let lines = 0;
      let bytes = 0;
      const decoder = new TextDecoder();
      let tail = '';
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.byteLength;
        const text = tail + decoder.decode(chunk, { stream: true });
        const parts = text.split('\n');
        tail = parts.pop()!;
        lines += parts.length;
        if (lines === 1) assert.equal(JSON.parse(parts[0]).postings.length, 2);
      }
      assert.equal(lines, count, 'every entry, once');
      const grew = (peak - baseline) / 2 ** 20;
      assert.ok(bytes > 50 * 2 ** 20, `the export is ${(bytes / 2 ** 20).toFixed(0)} MiB`);
      assert.ok(grew < 32, `the heap grew ${grew.toFixed(0)} MiB while exporting ${(bytes / 2 ** 20).toFixed(0)} MiB`);
    } finally {
      clearInterval(sampler);
    }
    // The reconciliation stages both sides in Postgres: the process holds the upload and chunks of it, not the day.
    const statementCsv = seededStatementCsv(count, day, 'bulk');
    const before = retained();
    let reconcilingPeak = before;
    const reconcileSampler = setInterval(() => { reconcilingPeak = Math.max(reconcilingPeak, retained()); }, 500);
    const report = await reconcile({ from: day, to: day, statement_csv: statementCsv }).finally(() => clearInterval(reconcileSampler));
    assert.equal(report.status, 201, JSON.stringify(report.body).slice(0, 500));
    const reconcilingGrew = (reconcilingPeak - before) / 2 ** 20;
    assert.ok(reconcilingGrew < 40, `the heap grew ${reconcilingGrew.toFixed(0)} MiB while reconciling ${count} movements against a ${(statementCsv.length / 2 ** 20).toFixed(1)} MiB statement`);
    assert.deepEqual(report.body.summary, { matched: count, ledger_only: 0, statement_only: 0, mismatched: 0, ambiguous: 0, batch: 0 });
    assert.deepEqual(report.body.totals, [{ currency: 'USD', ledger: seeded.total, statement: seeded.total, matched: seeded.total, difference: '0.00' }]);
    assert.deepEqual(await violations(service.runtime.db), {}, 'the seeded ledger is a sound one');
  });
});
