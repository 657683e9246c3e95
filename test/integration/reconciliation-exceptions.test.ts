// The exceptions queue finance works (DESIGN.md section 5e), on a service of its own so that its
// day holds only what this test made: each unmatched item opens one exception, once however often
// the day is reconciled; finance resolves them by hand (matched, explained, adjusted through the
// ledger), once each, with bad pairs refused; a later run settles what its matching now pairs.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { expectError } from '../support/expect';
import { FinanceDesk, type SettledPayIn } from '../support/finance-desk';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import type { TestService } from '../support/service';
import { daysAfter, today } from '../support/days';


interface Exception { id: string; category: string; reference: string | null; currency: string; status: string; resolution: string | null; field: string | null; statement_line_id: string | null; ledger_entry_id: string | null; [k: string]: unknown }

describe('reconciliation exceptions: the queue finance works', function () {
  this.timeout(240_000);
  const desk = new FinanceDesk('exceptions');
  let service: TestService;
  const resolvedEvents = new Map<string, DomainEventEnvelope>();
  const base = () => service.baseUrl;
  const master = () => service.config.masterKey;
  /** The day's pay-ins, by what their statement line does. */
  const paid: Record<string, SettledPayIn> = {};
  let exceptions: Exception[] = [];
  const about = (name: string) => exceptions.find((e) => e.reference === paid[name].external_id && (e.category !== 'statement_only' || e.field === 'reference'))!;
  const settledPayIn = (amount: string, scenario: string | null, currency = 'USD') => desk.settledPayIn(amount, scenario, currency);

  before(async () => {
    await desk.start({ PAYMENT_SETTLE_INTERVAL_MS: '100' }, (event: DomainEventEnvelope) => { if (event.type === 'reconciliation.exception_resolved') resolvedEvents.set(event.resource_id, event); });
    service = desk.service;
  });
  after(() => desk.stop());

  const reconcile = (body: Record<string, unknown> = {}) => call(base(), 'POST', '/v1/reconciliations', { partner: 'openbank', from: today(), to: today(), ...body }, { token: master() });
  const list = (query: string) => call(base(), 'GET', `/v1/reconciliation-exceptions?${query}`, undefined, { token: master() });
  const resolve = (id: string, body: Record<string, unknown>, idempotencyKey = randomUUID()) =>
    call(base(), 'POST', `/v1/reconciliation-exceptions/${id}/resolve`, body, { token: master(), idempotencyKey });

  it('opens one exception per unmatched item, once however often the day is reconciled, and lists them oldest first', async () => {
    paid.missing = await settledPayIn('41.00', 'statement_missing');
    paid.twice = await settledPayIn('41.00', 'statement_duplicate');
    paid.twiceMore = await settledPayIn('47.00', 'statement_duplicate');
    paid.twiceEur = await settledPayIn('41.00', 'statement_duplicate', 'EUR');
    paid.fee = await settledPayIn('42.00', 'statement_fee');
    paid.late = await settledPayIn('45.00', 'statement_late');
    paid.clean = await settledPayIn('44.00', null);

    const first = await reconcile();
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.deepEqual(first.body.exceptions, { opened: 6, resolved: 0 });
    const again = await reconcile();
    assert.deepEqual([again.body.summary, again.body.exceptions], [first.body.summary, { opened: 0, resolved: 0 }], 'a second run finds the same exceptions');

    const open = await list('partner=openbank&status=open&limit=100');
    assert.equal(open.status, 200, JSON.stringify(open.body));
    exceptions = open.body.data;
    assert.equal(exceptions.length, 6);
    assert.deepEqual(exceptions.map((e) => e.reconciliation_id), Array(6).fill(first.body.id), 'oldest first: all from the first report');
    assert.deepEqual([about('missing').category, about('twice').category, about('fee').field, about('late').category], ['ledger_only', 'statement_only', 'fee', 'ledger_only']);
    assert.ok(!exceptions.some((e) => e.reference === paid.clean.external_id), 'a matched item is no exception');

    const firstPage = await list('status=open&limit=4');
    const secondPage = await list(`status=open&limit=4&before=${firstPage.body.next_cursor}`);
    assert.deepEqual([firstPage.body.has_more, secondPage.body.has_more], [true, false]);
    assert.deepEqual([...firstPage.body.data, ...secondPage.body.data].map((e: Exception) => e.id), exceptions.map((e) => e.id), 'the pages go on in the same order');
    assert.deepEqual((await list('status=resolved')).body.data, []);
    assert.deepEqual((await list('partner=fiat')).body.data, []);

    const one = await call(base(), 'GET', `/v1/reconciliation-exceptions/${about('fee').id}`, undefined, { token: master() });
    assert.deepEqual(one.body, about('fee'));
    expectError(await call(base(), 'GET', `/v1/reconciliation-exceptions/${randomUUID()}`, undefined, { token: master() }), 404, 'reconciliation_exception_not_found', 'id');
    expectError(await call(base(), 'GET', '/v1/reconciliation-exceptions', undefined, { token: desk.owner.key }), 403, 'insufficient_scope');
  });

  it('refuses a pair that is no pair, naming the field, and closes both sides of one that is', async () => {
    const missing = about('missing');
    const lineOf = (name: string) => about(name).statement_line_id!;
    expectError(await resolve(missing.id, { resolution: 'matched', note: 'same amount', statement_line_id: lineOf('twiceMore') }), 422, 'exception_pair_mismatch', 'amount');
    expectError(await resolve(missing.id, { resolution: 'matched', note: 'same amount', statement_line_id: lineOf('twiceEur') }), 422, 'exception_pair_mismatch', 'currency');
    expectError(await resolve(missing.id, { resolution: 'matched', note: 'n', statement_line_id: 'no-such-line' }), 422, 'exception_pair_mismatch', 'statement_line_id');
    expectError(await resolve(missing.id, { resolution: 'matched', note: 'n', ledger_entry_id: randomUUID() }), 422, 'exception_pair_mismatch', 'ledger_entry_id');
    expectError(await resolve(missing.id, { resolution: 'matched', note: 'n' }), 400, 'invalid_request', 'statement_line_id');
    expectError(await resolve(missing.id, { resolution: 'explained', note: 'n', ledger_entry_id: randomUUID() }), 400, 'invalid_request', 'ledger_entry_id');
    expectError(await resolve(missing.id, { resolution: 'explained', note: '' }), 400, 'invalid_request', 'note');
    expectError(await resolve(missing.id, { resolution: 'forgiven', note: 'n' }), 400, 'invalid_request', 'resolution');
    assert.equal((await list('status=resolved')).body.data.length, 0, 'nothing refused changed anything');

    const matched = await resolve(missing.id, { resolution: 'matched', note: 'the partner put this payment under the wrong reference', statement_line_id: lineOf('twice') });
    assert.equal(matched.status, 200, JSON.stringify(matched.body));
    assert.deepEqual([matched.body.status, matched.body.resolution, matched.body.resolved_by, matched.body.counterpart_exception_id], ['resolved', 'matched', 'master_key', about('twice').id]);
    const other = (await call(base(), 'GET', `/v1/reconciliation-exceptions/${about('twice').id}`, undefined, { token: master() })).body;
    assert.deepEqual([other.status, other.resolution, other.counterpart_exception_id, other.note], ['resolved', 'matched', missing.id, 'the partner put this payment under the wrong reference']);

    // A pair matched by hand is matched for good: a later run reports both sides matched, by hand.
    const later = await reconcile();
    assert.equal(later.status, 201, JSON.stringify(later.body));
    const csv = await (await fetch(`${base()}/v1/reconciliations/${later.body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } })).text();
    const rows = csv.split('\n').filter((line) => line.includes(missing.ledger_entry_id!) || line.includes(lineOf('twice')));
    // One matched item names both sides of the pair (its columns: src/reconciliation/run-sql.ts ITEM_COLUMNS).
    assert.equal(rows.length, 1, `one item for the pair: ${rows.join(' / ')}`);
    const columns = rows[0].split(',');
    assert.deepEqual([columns[0], columns[1], columns[2], columns.at(-1)], ['matched', missing.ledger_entry_id, lineOf('twice'), 'by_hand'], `both sides reported matched by hand: ${rows[0]}`);
  });

  it('explains and adjusts, once each: an adjustment is a balanced entry between settlement and suspense, posted by the ledger', async () => {
    const explainKey = randomUUID();
    const explained = await resolve(about('twiceMore').id, { resolution: 'explained', note: 'the partner confirmed the duplicate and will not pay it' }, explainKey);
    assert.equal(explained.status, 200, JSON.stringify(explained.body));
    assert.deepEqual([explained.body.resolution, explained.body.adjustment_entry_id, typeof explained.body.resolved_at], ['explained', null, 'string']);
    const replay = await resolve(about('twiceMore').id, { resolution: 'explained', note: 'the partner confirmed the duplicate and will not pay it' }, explainKey);
    assert.deepEqual([replay.status, replay.body], [200, explained.body], 'the same Idempotency-Key replays the answer');
    expectError(await resolve(about('twiceMore').id, { resolution: 'explained', note: 'again' }), 409, 'exception_already_resolved', 'id');

    const adjusted = await resolve(about('fee').id, { resolution: 'adjusted', note: 'the partner\'s fee of 0.50 is ours to bear' });
    assert.equal(adjusted.status, 200, JSON.stringify(adjusted.body));
    const entryId = adjusted.body.adjustment_entry_id;
    const { rows: postings } = await service.runtime.db.raw(
      `SELECT la.code, p.amount::text AS amount, e.kind FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id JOIN journal_entries e ON e.id = p.entry_id
        WHERE p.entry_id = ? ORDER BY la.code`, [entryId]);
    assert.deepEqual(postings.map((p: { code: string; amount: string; kind: string }) => [p.kind, p.code, Number(p.amount).toFixed(2)]), [
      ['reconciliation_adjustment', 'sys:partner:openbank:USD', '0.50'],
      ['reconciliation_adjustment', 'sys:reconciliation:suspense:USD', '-0.50'],
    ], 'the partner paid 0.50 less than the ledger had: its settlement account owes that back, from suspense');
    expectError(await resolve(about('fee').id, { resolution: 'adjusted', note: 'again' }), 409, 'exception_already_resolved', 'id');
    const trial = await call(base(), 'GET', '/v1/ledger/trial-balance', undefined, { token: master() });
    assert.equal(trial.body.accounts.find((a: { ledger_account: string }) => a.ledger_account === 'sys:reconciliation:suspense:USD').net, '-0.50');
    assert.ok(trial.body.totals.every((t: { net: string }) => Number(t.net) === 0), 'the ledger still balances');

    // The adjustment is not a movement the partner made: the next run reports the day as before.
    const rerun = await reconcile();
    assert.deepEqual(rerun.body.exceptions, { opened: 0, resolved: 0 });
    for (const id of [about('missing').id, about('twice').id, about('twiceMore').id, about('fee').id]) {
      const event = await eventually(async () => resolvedEvents.get(id), 10_000, `the reconciliation.exception_resolved event of ${id}`);
      assert.deepEqual([event.account_id, event.data.status], [null, 'resolved']);
    }
    const adjustedEvent = resolvedEvents.get(about('fee').id)!;
    assert.deepEqual([adjustedEvent.data.amount, adjustedEvent.data.currency, JSON.parse(adjustedEvent.data.attributes!).adjustment_entry_id], ['-0.50', 'USD', entryId]);
    assert.deepEqual(await violations(service.runtime.db), {});
  });

  it('settles an exception still open from an earlier run when a later run pairs it: a line three days late', async () => {
    const late = about('late');
    const later = await reconcile({ date_tolerance_days: 3 });
    assert.equal(later.status, 201, JSON.stringify(later.body));
    assert.deepEqual(later.body.exceptions, { opened: 0, resolved: 1 });
    const settled = (await call(base(), 'GET', `/v1/reconciliation-exceptions/${late.id}`, undefined, { token: master() })).body;
    assert.deepEqual([settled.status, settled.resolution, settled.resolved_by, settled.resolved_by_reconciliation_id], ['resolved', 'matched', `reconciliation:${later.body.id}`, later.body.id]);
    assert.match(settled.note, new RegExp(later.body.id));
    const csv = await (await fetch(`${base()}/v1/reconciliations/${later.body.id}`, { headers: { authorization: `Bearer ${master()}`, accept: 'text/csv' } })).text();
    const row = csv.split('\n').find((line) => line.includes(paid.late.external_id))!;
    assert.match(row, new RegExp(`^matched,.*closes exception ${late.id}`), 'the report says which exception its match closed');
    const event = await eventually(async () => resolvedEvents.get(late.id), 10_000, 'the event of the settled exception');
    assert.equal(JSON.parse(event.data.attributes!).resolved_by_reconciliation_id, later.body.id);
    const open = (await list('status=open')).body.data.map((e: Exception) => e.id);
    assert.deepEqual(open, [about('twiceEur').id], 'only the exception nobody worked is open');

    // The line's own day, with the default tolerance of a day: the pair the earlier run matched
    // stays matched (a side is matched once, for good), and nothing new opens.
    const lateDay = daysAfter(today(), 3);
    const ofLateDay = await reconcile({ from: lateDay, to: lateDay });
    assert.deepEqual([ofLateDay.status, ofLateDay.body.exceptions], [201, { opened: 0, resolved: 0 }], JSON.stringify(ofLateDay.body));
    assert.ok(!(await list('status=open')).body.data.some((e: Exception) => e.reference === paid.late.external_id));
  });
});
