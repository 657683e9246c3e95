// A resolution has one outcome, and the queue around it (issue 39), on a service of its own: an
// adjustment whose ledger reply is late leaves the exception `resolving`, and nothing but the
// same request resolves it; a later run neither auto-closes it nor counts its line twice, but
// opens an exception that reverses the adjustment; a retried resolve answers the first
// resolution. Beside it: a run retried under its Idempotency-Key, paging `status=open` while
// the queue is worked, the queue as CSV, one meaning of from/to, the schedule filling in missed
// days, day windows in UTC whatever the database's time zone, the events of opened exceptions, and
// an ambiguous exception (an uploaded line two pay-ins fit) matched by hand with the one chosen.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { DomainEventEnvelope } from '../../ledger/messages';
import { createDb } from '../../src/db';
import { adjustmentEntryId, ExceptionDesk } from '../../src/reconciliation/exceptions';
import { Reconciliations } from '../../src/reconciliation/reports';
import { ReconciliationSchedule } from '../../src/reconciliation/schedule';
import { LedgerClient } from '../../src/ledger-client/client';
import { PARTNER_SLUGS } from '../../src/partners/registry';
import { TOPICS } from '../../src/kafka/topics';
import type { Runtime } from '../../src/runtime';
import { expectError } from '../support/expect';
import { FinanceDesk, type SettledPayIn } from '../support/finance-desk';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import type { TestService } from '../support/service';
import { daysAfter, today } from '../support/days';


interface Exception { id: string; category: string; reference: string | null; status: string; resolution: string | null; [k: string]: unknown }

describe('reconciliation exceptions: one outcome per resolution, and the queue around it', function () {
  this.timeout(300_000);
  const desk = new FinanceDesk('resolving');
  let service: TestService;
  const events: DomainEventEnvelope[] = [];
  /** The id of every domain event read, markers included. */
  const read = new Set<string>();
  const base = () => service.baseUrl;
  const master = () => service.config.masterKey;
  const paid: Record<string, SettledPayIn> = {};
  let sender: LedgerClient;

  before(async () => {
    // The schedule off: this test counts the reports and runs the schedule's check itself.
    await desk.start({ PAYMENT_SETTLE_INTERVAL_MS: '100', RECONCILIATION_CHECK_MS: '0' }, (event) => {
      read.add(event.id);
      if (event.type.startsWith('reconciliation.')) events.push(event);
    });
    service = desk.service;
    sender = new LedgerClient(service.runtime);
  });
  after(async () => {
    await sender?.stop();
    await desk.stop();
  });

  const reconcile = (body: Record<string, unknown> = {}, idempotencyKey?: string) =>
    call(base(), 'POST', '/v1/reconciliations', { partner: 'openbank', from: today(), to: today(), ...body }, { token: master(), idempotencyKey });
  const list = (query: string) => call(base(), 'GET', `/v1/reconciliation-exceptions?${query}`, undefined, { token: master() });
  const one = async (id: string): Promise<Exception> => (await call(base(), 'GET', `/v1/reconciliation-exceptions/${id}`, undefined, { token: master() })).body;
  const resolve = (id: string, body: Record<string, unknown>, idempotencyKey = randomUUID()) =>
    call(base(), 'POST', `/v1/reconciliation-exceptions/${id}/resolve`, body, { token: master(), idempotencyKey });
  const openOf = async (): Promise<Exception[]> => (await list('partner=openbank&status=open&limit=200')).body.data;
  const about = (all: Exception[], name: string) => all.find((e) => e.reference === paid[name].external_id)!;
  /** Puts an event no consumer of the service acts on (no account, no known type) on domain.events under `key`; returns its id. */
  const markEvent = async (key: string): Promise<string> => {
    const { runtime } = service;
    const id = randomUUID();
    const marker: DomainEventEnvelope = {
      id, type: 'test.marker', created_at: new Date().toISOString(), environment: 'sandbox', resource_type: 'marker', resource_id: key,
      account_id: null, account_seq: 0, data: { id, status: 'marker', amount: null, currency: null, attributes: null },
    };
    await runtime.producer.send({ topic: runtime.names.full(TOPICS.domainEvents), acks: -1, messages: [{ key, value: await runtime.codec.encode(TOPICS.domainEvents, marker) }] });
    return id;
  };

  it('opens each exception once with a reconciliation.exception_opened event; a run retried under its Idempotency-Key answers the same report', async () => {
    paid.late = await desk.settledPayIn('45.00', 'statement_late');
    paid.missing = await desk.settledPayIn('43.00', 'statement_missing');
    paid.fee = await desk.settledPayIn('42.00', 'statement_fee');
    paid.dup = await desk.settledPayIn('41.00', 'statement_duplicate');
    const key = randomUUID();
    const first = await reconcile({}, key);
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.deepEqual(first.body.exceptions, { opened: 4, resolved: 0 });
    const replay = await reconcile({}, key);
    assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed'), replay.body], [200, 'true', first.body], 'the same key and body: the stored report');
    expectError(await reconcile({ date_tolerance_days: 2 }, key), 409, 'idempotency_conflict', 'Idempotency-Key');
    const { rows: [{ n }] } = await service.runtime.db.raw('SELECT count(*)::int AS n FROM reconciliations');
    assert.equal(n, 1, 'no second report');

    const open = await openOf();
    assert.equal(open.length, 4);
    const opened = await eventually(async () => {
      const seen = events.filter((e) => e.type === 'reconciliation.exception_opened');
      return seen.length >= 4 ? seen : undefined;
    }, 15_000, 'the exception_opened events');
    assert.deepEqual(opened.map((e) => e.resource_id).sort(), open.map((e) => e.id).sort(), 'one event per exception opened');
    const feeEvent = opened.find((e) => e.resource_id === about(open, 'fee').id)!;
    assert.deepEqual([feeEvent.account_id, feeEvent.resource_type, feeEvent.data.status, feeEvent.data.amount, JSON.parse(feeEvent.data.attributes!).field], [null, 'reconciliation_exception', 'open', '-0.50', 'fee']);
    // An event of the replay would be published with the report's id as its key. Once the outbox is
    // empty it is on Kafka, before a marker under the same key, on the same partition.
    await eventually(async () => ((await service.runtime.db('outbox_rounds').first('round_id')) ? undefined : true), 15_000, 'the outbox empty');
    const marker = await markEvent(first.body.id);
    await eventually(async () => (read.has(marker) ? true : undefined), 15_000, 'the marker read');
    assert.equal(events.filter((e) => e.type === 'reconciliation.completed').length, 1, 'the replay announced nothing');
    assert.deepEqual(about(open, 'fee').history, [{ at: about(open, 'fee').created_at, action: 'opened', by: `reconciliation:${first.body.id}`, note: about(open, 'fee').reason }]);
  });

  it('while an adjustment is in flight (the ledger\'s reply late) nothing else resolves the exception; the same request finishes it, and a retry answers it', async () => {
    const late = about(await openOf(), 'late');
    // The ledger gets the command but its reply comes after the desk stopped waiting: a 503.
    const lateLedger = { execute: (...args: Parameters<LedgerClient['execute']>) => { void sender.execute(args[0], args[1], args[2], args[3], 30_000); return Promise.resolve(null); } };
    const slow = new ExceptionDesk(service.runtime, lateLedger as unknown as LedgerClient, 1);
    const asked = { resolution: 'adjusted', note: 'the partner will not pay this line' } as const;
    await assert.rejects(slow.resolve(late.id, { ...asked, by: 'master_key' }), (error: { code?: string }) => error.code === 'service_unavailable');
    assert.equal((await one(late.id)).status, 'resolving');
    expectError(await resolve(late.id, { resolution: 'explained', note: 'found the line' }), 409, 'exception_resolving', 'id', 'another body while the adjustment is in flight');
    await eventually(async () => (await service.runtime.db('journal_entries').where('id', adjustmentEntryId(late.id)).first('id')) ?? undefined, 20_000, 'the ledger posts the adjustment');
    expectError(await resolve(late.id, { resolution: 'explained', note: 'found the line' }), 409, 'exception_resolving', 'id', 'still resolving until the request is repeated');

    const finished = await resolve(late.id, asked);
    assert.equal(finished.status, 200, JSON.stringify(finished.body));
    assert.deepEqual([finished.body.status, finished.body.resolution, finished.body.adjustment_entry_id, finished.body.resolved_by], ['resolved', 'adjusted', adjustmentEntryId(late.id), 'master_key']);
    assert.deepEqual(finished.body.history.map((h: { action: string }) => h.action), ['opened', 'resolving', 'resolved']);
    const again = await resolve(late.id, asked);
    assert.deepEqual([again.status, again.body], [200, finished.body], 'the same body under another key answers the first resolution');
    expectError(await resolve(late.id, { resolution: 'explained', note: 'found the line' }), 409, 'exception_already_resolved', 'id');
    const { rows: [{ n }] } = await service.runtime.db.raw(`SELECT count(*)::int AS n FROM journal_entries WHERE kind = 'reconciliation_adjustment'`);
    assert.equal(n, 1, 'one adjustment posted');
  });

  it('a line that arrives for an adjusted exception opens a new one that reverses the adjustment; the adjusted one is not auto-closed', async () => {
    const late = about((await list('partner=openbank&status=resolved')).body.data, 'late');
    const later = await reconcile({ date_tolerance_days: 3 });
    assert.equal(later.status, 201, JSON.stringify(later.body));
    assert.deepEqual(later.body.exceptions, { opened: 1, resolved: 0 }, 'the adjusted exception is not settled by the run');
    const still = await one(late.id);
    assert.deepEqual([still.status, still.resolution, still.resolved_by], ['resolved', 'adjusted', 'master_key']);
    const reversal = (await openOf()).find((e) => e.reverses_exception_id === late.id)!;
    assert.ok(reversal, 'a reversal exception');
    assert.deepEqual([reversal.category, reversal.field, reversal.ledger_amount, reversal.statement_amount], ['mismatched', 'amount', '0.00', '45.00']);
    const rerun = await reconcile({ date_tolerance_days: 3 });
    assert.deepEqual(rerun.body.exceptions, { opened: 0, resolved: 0 }, 'reversed once');

    const reversed = await resolve(reversal.id, { resolution: 'adjusted', note: 'the line came: the write-off is undone' });
    assert.equal(reversed.status, 200, JSON.stringify(reversed.body));
    const { rows } = await service.runtime.db.raw(
      `SELECT coalesce(sum(p.amount), 0)::text AS net FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id WHERE la.code = 'sys:reconciliation:suspense:USD'`);
    assert.equal(Number(rows[0].net), 0, 'the adjustment and its reversal cancel: the line is counted once');
    assert.deepEqual(await violations(service.runtime.db), {});
  });

  it('pages status=open on when the last item of a page is resolved meanwhile, and takes from/to with one meaning', async () => {
    const first = await list('partner=openbank&status=open&limit=1');
    assert.equal(first.body.has_more, true);
    const [last] = first.body.data as Exception[];
    const explained = await resolve(last.id, { resolution: 'explained', note: '=HYPERLINK("http://example.test")' });
    assert.equal(explained.status, 200, JSON.stringify(explained.body));
    const next = await list(`partner=openbank&status=open&limit=1&before=${last.id}`);
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.data.length, 1);
    assert.ok(next.body.data[0].id !== last.id);

    const all = (await list('partner=openbank&limit=200')).body.data as Exception[];
    const byDay = await list(`partner=openbank&limit=200&from=${today()}&to=${today()}`);
    assert.deepEqual(byDay.body.data.map((e: Exception) => e.id), all.map((e) => e.id), 'from=to=today is today');
    assert.deepEqual((await list(`partner=openbank&from=${daysAfter(today(), -1)}&to=${daysAfter(today(), -1)}`)).body.data, []);
    const instant = new Date(Date.parse(all[0].created_at as string)).toISOString();
    assert.ok(!(await list(`partner=openbank&limit=200&to=${instant}`)).body.data.some((e: Exception) => e.id === all[0].id), 'an instant in to is exact, exclusive');
  });

  it('gives the queue as CSV (format=csv or Accept: text/csv), formulas kept as text', async () => {
    const csv = async (query: string, accept = '*/*') => {
      const response = await fetch(`${base()}/v1/reconciliation-exceptions?${query}`, { headers: { authorization: `Bearer ${master()}`, accept } });
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type')!, /^text\/csv/);
      return response.text();
    };
    const byFormat = await csv('partner=openbank&format=csv');
    const byAccept = await csv('partner=openbank', 'text/csv');
    assert.equal(byFormat, byAccept);
    const lines = byFormat.trim().split('\n');
    assert.match(lines[0], /^id,created_at,partner,category,status,/);
    const all = (await list('partner=openbank&limit=200')).body.data as Exception[];
    assert.equal(lines.length, all.length + 1);
    assert.ok(byFormat.includes(`"'=HYPERLINK(""http://example.test"")"`), 'a note that starts a formula is text');
    const mismatched = (await list('partner=openbank&category=mismatched&limit=200')).body.data as Exception[];
    assert.deepEqual(mismatched.map((e) => e.id), all.filter((e) => e.category === 'mismatched').map((e) => e.id), 'the category filter');
    const resolvedOnly = await csv('partner=openbank&status=resolved&format=csv');
    assert.equal(resolvedOnly.trim().split('\n').length, all.filter((e) => e.status === 'resolved').length + 1);
  });

  it('two resolutions racing for one open exception: one wins under the row lock, the other is refused, and only the winner\'s money moves', async () => {
    const target = (await openOf()).find((e) => e.category === 'ledger_only' || (e.category === 'mismatched' && e.field === 'fee'))!;
    assert.ok(target, 'an adjustable exception still open');
    const [explained, adjusted] = await Promise.all([
      resolve(target.id, { resolution: 'explained', note: 'the partner confirmed it' }),
      resolve(target.id, { resolution: 'adjusted', note: 'ours to bear' }),
    ]);
    assert.deepEqual([explained.status, adjusted.status].sort(), [200, 409], JSON.stringify([explained.body, adjusted.body]));
    const loser = explained.status === 409 ? explained : adjusted;
    assert.ok(['exception_already_resolved', 'exception_resolving'].includes(loser.body.error), JSON.stringify(loser.body));
    const final = await one(target.id);
    const posted = await service.runtime.db('journal_entries').where('id', adjustmentEntryId(target.id)).first('id');
    assert.deepEqual([final.status, final.resolution, Boolean(posted)], ['resolved', explained.status === 200 ? 'explained' : 'adjusted', explained.status !== 200]);
  });

  it('the schedule fills in every day since the last one it reconciled', async () => {
    const now = new Date();
    const yesterday = daysAfter(today(), -1);
    await service.runtime.db('reconciliations').insert({
      id: randomUUID(), partner: 'openbank', from_date: daysAfter(today(), -4), to_date: daysAfter(today(), -4), trigger: 'schedule', source: 'partner', amount_tolerance: '0',
      date_tolerance_days: 1, summary: JSON.stringify({ matched: 0, ledger_only: 0, statement_only: 0, mismatched: 0 }), totals: '[]', created_at: now,
    });
    const asked: Array<[string, string]> = [];
    const recorder = { run: async (request: { partner: string; from: string; to: string }) => { assert.equal(request.from, request.to); asked.push([request.partner, request.from]); return null; } };
    await new ReconciliationSchedule(service.runtime, recorder as unknown as Reconciliations, 60_000).check(now);
    const openbank = asked.filter(([p]) => p === 'openbank').map(([, day]) => day);
    assert.deepEqual(openbank, [daysAfter(today(), -3), daysAfter(today(), -2), yesterday], 'each missed day, oldest first');
    for (const partner of PARTNER_SLUGS.filter((p) => p !== 'openbank')) assert.deepEqual(asked.filter(([p]) => p === partner).map(([, d]) => d), [yesterday], partner);
  });

  it('reads a day in UTC whatever the database session\'s time zone', async () => {
    const fresh = await desk.settledPayIn('39.00', 'statement_missing');
    // A zone whose day boundary falls on the other side of now: today in it is not today in UTC.
    const zone = new Date().getUTCHours() >= 12 ? 'Pacific/Kiritimati' : 'Etc/GMT+12';
    const zoned = createDb(service.config.databaseUrl, 2, 0, `-c timezone=${zone}`);
    try {
      const runs = new Reconciliations({ ...service.runtime, db: zoned } as Runtime, () => { throw new Error('the statement is uploaded'); });
      const report = await runs.run({
        partner: 'openbank', from: today(), to: today(), dryRun: true, amountTolerance: '0', dateToleranceDays: 0, trigger: 'api',
        statementCsv: `id,reference,amount,currency,value_date\nstl_other,pay_other,1.00,USD,${today()}\n`,
      });
      assert.ok(report!.items.some((item) => item.category === 'ledger_only' && item.reference === fresh.external_id), `today's pay-in is in today's report (session time zone ${zone})`);
    } finally {
      await zoned.destroy();
    }
  });

  it('an adjustment the ledger refuses leaves the exception open again, its history saying why, and closes a reversal of it', async () => {
    const later = await reconcile();
    assert.equal(later.status, 201, JSON.stringify(later.body));
    const target = (await openOf()).find((e) => e.category === 'ledger_only')!;
    // Its line arrived while the adjustment was in flight: a reversal waits for it.
    const reversalId = randomUUID();
    await service.runtime.db('reconciliation_exceptions').insert({
      id: reversalId, reconciliation_id: later.body.id, partner: 'openbank', category: 'mismatched', field: 'amount', ledger_entry_id: target.ledger_entry_id, statement_line_id: 'stl_arrived',
      currency: 'USD', ledger_amount: '0.00', statement_amount: '39.00', reason: 'the line arrived', amount_tolerance: '0', status: 'open', created_at: new Date(), reverses_exception_id: target.id,
    });
    const refusing = { execute: async () => ({ outcome: { kind: 'refused', code: 'invalid_request', message: 'the settlement account is closed', field: null }, replayed: false }) };
    const desk = new ExceptionDesk(service.runtime, refusing as unknown as LedgerClient, 1000);
    await assert.rejects(desk.resolve(target.id, { resolution: 'adjusted', note: 'write it off', by: 'master_key' }), (error: { code?: string }) => error.code === 'nothing_to_adjust');
    const reopened = await one(target.id);
    assert.equal(reopened.status, 'open');
    assert.deepEqual((reopened.history as Array<{ action: string }>).map((h) => h.action), ['opened', 'resolving', 'reopened']);
    const reversal = await one(reversalId);
    assert.deepEqual([reversal.status, reversal.resolution, reversal.resolved_by], ['resolved', 'explained', 'ledger'], 'nothing to reverse');
    const explained = await resolve(target.id, { resolution: 'explained', note: 'found it' });
    assert.deepEqual([explained.status, explained.body.status, explained.body.resolution], [200, 'resolved', 'explained']);
  });

  it('matches an ambiguous exception by hand with the candidate chosen, closing that candidate\'s own exception with it', async () => {
    const { exceptionId: ambiguous, candidates: [first, chosen] } = await desk.ambiguousLine('20.00');
    expectError(await resolve(ambiguous, { resolution: 'matched', note: 'the bank says so', ledger_entry_id: randomUUID() }), 422, 'exception_pair_mismatch', 'ledger_entry_id');
    const matched = await resolve(ambiguous, { resolution: 'matched', note: 'the bank says so', ledger_entry_id: chosen.ledgerEntryId });
    assert.equal(matched.status, 200, JSON.stringify(matched.body));
    assert.deepEqual([matched.body.status, matched.body.resolution, matched.body.counterpart_exception_id], ['resolved', 'matched', chosen.exceptionId]);
    assert.match(matched.body.history.at(-1).note, new RegExp(`ledger entry ${chosen.ledgerEntryId}`));
    const alone = await one(chosen.exceptionId);
    assert.deepEqual([alone.status, alone.resolution, alone.counterpart_exception_id], ['resolved', 'matched', ambiguous]);
    assert.equal((await one(first.exceptionId)).status, 'open', 'the candidate not chosen is still alone');
  });
});
