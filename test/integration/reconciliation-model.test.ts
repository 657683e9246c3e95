// The model-based test of matching (test/support/reconcile-model.ts) end to end: stretches of
// generated days seeded into the ledger in Postgres, their statements uploaded to
// POST /v1/reconciliations by several runs over overlapping days (each later run a re-export of
// the day: other ids and order, CRLF, amounts written short), each report (its JSON items and its
// CSV) and the open exceptions checked against the truth by the same oracle as the unit test's.
// Then finance's part: every open exception whose difference is sure is resolved `adjusted`
// through the route, and the ledger is read back through the journal and the trial balance: each
// adjustment posted once, exactly the difference the truth has, between the settlement account
// and suspense of its currency (a stretch's payments are in USD, EUR or GBP, some in a second
// currency), and every currency netting to zero. Then the lines left off the statements arrive
// late: each adjustment of their payments is reversed once, by exactly its amount. npm test runs
// a fixed seed's 5 stretches of 1 to 3 days; the system suite 160 stretches (some 320 days) of a
// fixed seed and of one drawn afresh each run (test/support/seeds.ts; TEST_SEED replays one);
// RECONCILE_E2E_STRETCHES=1 with a stretch's seed replays that stretch alone.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money, type Amount, type Currency } from '../../ledger/money';
import type { ReportItem } from '../../src/reconciliation/match';
import type { JournalEntry, TrialBalance } from '../../src/statements/trial-balance';
import { expectError } from '../support/expect';
import { FinanceDesk } from '../support/finance-desk';
import { call, type JsonResponse } from '../support/http';
import { fixedSeeds, replayOf, seeds } from '../support/seeds';
import { checkRun, dayAtRun, daySeenAfter, generateDays, Totals, type ModelDay } from '../support/reconcile-model';
import { booksDisagree, checkOpen, sureDifferences } from '../support/reconcile-queue';
import { fields, nameLines, scopedLineOf, statementCsv, unscoped, withUuids } from '../support/reconcile-statements';
import { creditFromFaucet, ensureSettlementAccounts, postSeededEntries } from '../support/seed-ledger';

/** Days between two stretches' first days: their days and tolerances never meet. */
const STRIDE = 12;
/** The first day of the next run's stretches: the runs of one file share the books, never a day. */
let nextDay = 40;
/** A run's stretches, RECONCILE_E2E_STRETCHES when set (1 replays one stretch). */
const stretchesOr = (count: number) => Number(process.env.RECONCILE_E2E_STRETCHES || count);

/** `work` on each of `items`, `width` at a time. */
async function inFlight<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      next += 1;
      await work(items[next - 1]);
    }
  }));
}

type OpenException = ReportItem & { id: string };
/** An exception to adjust: its stretch's seed, and the difference the truth has for it. */
interface SureException { seed: number; exception: OpenException; difference: Amount }

const settlementOf = (currency: Currency) => `sys:partner:openbank:${currency}`;
const suspenseOf = (currency: Currency) => `sys:reconciliation:suspense:${currency}`;
/** Several adjustments in flight at once, as a finance team works the queue; the ledger takes them in rounds. */
const ADJUSTING_WIDTH = 16;

describe('reconciliation matching against a model of the truth, end to end', function () {
  this.timeout(300_000);
  const desk = new FinanceDesk('reconcile_model');
  // Finance adjusts the queue 16 requests at a time, each asked twice: beyond the default 100 a second.
  before(() => desk.start({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' }, () => undefined));
  after(() => desk.stop());

  /** Seeds the days' movements as settled payments, one transaction per currency. */
  async function seed(days: ModelDay[]): Promise<void> {
    const all = days.flatMap((d) => d.movements);
    for (const currency of new Set(all.map((m) => m.currency))) await seedIn(currency, all.filter((m) => m.currency === currency));
  }

  async function seedIn(currency: Currency, moves: ModelDay['movements']): Promise<void> {
    const accountId = desk.owner.account.id;
    await desk.service.runtime.db.transaction(async (trx) => {
      await ensureSettlementAccounts(trx, accountId, currency);
      // The movements pay out as well as in: a stretch replayed alone (or the first of a run) is
      // funded first with what its payouts would take below zero, as earlier stretches funded it.
      const { rows } = await trx.raw('SELECT balance::text AS balance FROM ledger_accounts WHERE code = ?', [`acct:${accountId}:available:${currency}`]);
      let running = new Money(rows[0].balance);
      let lowest = running;
      for (const m of moves) { running = running.plus(m.amount); if (running.lt(lowest)) lowest = running; }
      if (lowest.isNegative()) await creditFromFaucet(trx, accountId, currency, lowest.negated().toFixed(2));
      await trx.raw(`CREATE TEMP TABLE seed ON COMMIT DROP AS
        SELECT * FROM unnest(?::uuid[], ?::text[], ?::numeric[], ?::timestamptz[]) WITH ORDINALITY AS s(entry_id, reference, amount, at, i)`,
      [moves.map((m) => m.entryId), moves.map((m) => m.reference) as unknown as string[], moves.map((m) => m.amount.toFixed(2)), moves.map((m) => `${m.date}T12:00:00Z`)]);
      await trx.raw(`INSERT INTO payments (id, account_id, customer_id, command_id, partner, direction, kind, amount, currency, status, external_id, idempotency_key, created_at, updated_at, completed_at)
        SELECT entry_id, ?, ?, 'model:' || entry_id, 'openbank', CASE WHEN amount > 0 THEN 'inbound' ELSE 'outbound' END, CASE WHEN amount > 0 THEN 'add_funds' ELSE 'send' END,
               abs(amount), ?, 'completed', reference, 'model-' || entry_id, at, at, at FROM seed`, [accountId, desk.customerId, currency]);
      await trx.raw(`INSERT INTO journal_entries (id, kind, command_id, payment_id, created_at) SELECT entry_id, 'payment_settle', 'model:' || entry_id, entry_id, at FROM seed`);
      await postSeededEntries(trx, accountId, currency);
    });
  }

  const master = () => desk.service.config.masterKey;
  /** The exception as a failure names it, with how to replay its stretch alone. */
  const named = ({ seed, exception: x }: SureException) =>
    `seed ${seed}, exception ${x.id} (${x.category}${x.field ? ` on ${x.field}` : ''}, line ${x.statement_line_id}, entry ${x.ledger_entry_id}; replay: TEST_SEED=${seed} RECONCILE_E2E_STRETCHES=1)`;

  /** Resolves an exception `adjusted`; while the ledger's answer is late (503, resolving) the same request again, as the route asks. */
  async function adjust(id: string, note: string): Promise<JsonResponse> {
    const key = randomUUID();
    for (let attempt = 1; ; attempt += 1) {
      const answer = await call(desk.service.baseUrl, 'POST', `/v1/reconciliation-exceptions/${id}/resolve`, { resolution: 'adjusted', note }, { token: master(), idempotencyKey: key });
      if (answer.status !== 503 || attempt === 20) return answer;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async function trialBalance(at: number): Promise<TrialBalance> {
    const answer = await call<TrialBalance>(desk.service.baseUrl, 'GET', `/v1/ledger/trial-balance?at=${new Date(at).toISOString()}`, undefined, { token: master() });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body;
  }
  const netOf = (balance: TrialBalance, code: string) => new Money(balance.accounts.find((a) => a.ledger_account === code)?.net ?? 0);

  /** When every adjustment posted so far had been answered: a later window starts after it (a stretch may take under a second). */
  let settledAt = 0;
  /** The reconciliation adjustments of the journal posted since `from`, by entry id (the journal read as finance exports it). */
  async function adjustmentsSince(from: Date): Promise<Map<string, JournalEntry>> {
    const window = `from=${from.toISOString()}&to=${new Date(Date.now() + 1000).toISOString()}`;
    const answer = await fetch(`${desk.service.baseUrl}/v1/ledger/journal?${window}`, { headers: { authorization: `Bearer ${master()}` } });
    assert.equal(answer.status, 200);
    const entries = (await answer.text()).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as JournalEntry);
    settledAt = Date.now();
    return new Map(entries.filter((e) => e.kind === 'reconciliation_adjustment').map((e) => [e.entry_id, e]));
  }

  /**
   * Finance's part: each sure exception resolved `adjusted` through the route (one without a
   * difference refused, nothing_to_adjust), the same request again answering the same resolution;
   * then the ledger read back: one adjusting entry per adjusted exception, posting exactly its
   * difference from the settlement account to suspense, and the trial balance at zero in every
   * currency, moved by the adjustments alone. Returns how many were adjusted.
   */
  async function adjustEach(runSeed: number, sure: SureException[], lastPosting: number): Promise<number> {
    // The trial balance after every posting: the seeded days lie ahead of today, the adjustments today.
    const afterAll = () => Math.max(Date.now() + 1000, lastPosting + 1000);
    const before = await trialBalance(afterAll());
    const started = new Date(Math.max(Date.now() - 1000, settledAt));
    const entryOf = new Map<string, string>();
    await inFlight(sure, ADJUSTING_WIDTH, async (s) => {
      const note = `model seed ${s.seed}: the partner's statement stands`;
      const answer = await adjust(s.exception.id, note);
      if (s.difference.isZero()) {
        expectError(answer, 422, 'nothing_to_adjust', 'resolution', `${named(s)}: the sides agree on the amount`);
        return;
      }
      assert.equal(answer.status, 200, `${named(s)}: ${JSON.stringify(answer.body)}`);
      assert.deepEqual([answer.body.status, answer.body.resolution], ['resolved', 'adjusted'], named(s));
      const again = await adjust(s.exception.id, note);
      assert.deepEqual([again.status, again.body], [200, answer.body], `${named(s)}: the same request again answers its resolution`);
      entryOf.set(s.exception.id, answer.body.adjustment_entry_id);
    });
    const adjusted = sure.filter((s) => !s.difference.isZero());
    const posted = await adjustmentsSince(started);
    const postingsOf = (entry: JournalEntry) => entry.postings.map((p) => `${p.ledger_account} ${new Money(p.amount).toFixed(2)}`).sort();
    for (const s of adjusted) {
      const entry = posted.get(entryOf.get(s.exception.id)!);
      assert.ok(entry, `${named(s)}: its adjusting entry ${entryOf.get(s.exception.id)} is not in the journal`);
      const { currency } = s.exception;
      assert.deepEqual(postingsOf(entry), [`${settlementOf(currency)} ${s.difference.negated().toFixed(2)}`, `${suspenseOf(currency)} ${s.difference.toFixed(2)}`].sort(),
        `${named(s)}: the adjustment posts the difference statement − ledger, ${s.difference.toFixed(2)}`);
    }
    assert.equal(new Set(entryOf.values()).size, adjusted.length, `seed ${runSeed}: two adjusted exceptions name one entry`);
    assert.equal(posted.size, adjusted.length, `seed ${runSeed}: ${posted.size} adjusting entries in the journal for ${adjusted.length} adjusted exceptions`);
    const after = await trialBalance(afterAll());
    for (const total of after.totals) assert.ok(new Money(total.net).isZero(), `seed ${runSeed}: the trial balance nets ${total.net} in ${total.currency}`);
    for (const currency of new Set(adjusted.map((s) => s.exception.currency))) {
      const sum = adjusted.filter((s) => s.exception.currency === currency).reduce((total, s) => total.plus(s.difference), new Money(0));
      assert.equal(netOf(after, suspenseOf(currency)).minus(netOf(before, suspenseOf(currency))).toFixed(2), sum.toFixed(2), `seed ${runSeed}: suspense moved by the adjustments in ${currency}`);
      assert.equal(netOf(after, settlementOf(currency)).minus(netOf(before, settlementOf(currency))).toFixed(2), sum.negated().toFixed(2), `seed ${runSeed}: the settlement account moved by the adjustments in ${currency}`);
    }
    return adjusted.length;
  }

  /**
   * After finance's part, the settlement account as the ledger has it (its move since `before`)
   * squares with the statements once the open exceptions and the matches are counted (booksDisagree).
   */
  /** The open exceptions now, their lines named as the generated days name them. */
  const openNow = async () => ((await desk.service.runtime.db('reconciliation_exceptions').where({ partner: 'openbank', status: 'open' })
    .select('id', 'ledger_entry_id', 'statement_line_id', 'category', 'currency', 'field', 'reason', 'ledger_amount', 'statement_amount', 'movements', 'candidates')) as OpenException[])
    .map((x) => ({ ...x, statement_line_id: unscoped(x.statement_line_id), candidates: x.candidates?.map((c) => ({ ...c, statement_line_id: unscoped(c.statement_line_id) })) ?? null }));

  async function expectBooksAgree(stretches: Parameters<typeof booksDisagree>[0], before: TrialBalance, at: number): Promise<void> {
    const after = await trialBalance(at);
    const moved = new Totals();
    for (const c of new Set(stretches.flatMap(({ day }) => day.movements.map((m) => m.currency)))) moved.add(c, netOf(after, settlementOf(c)).minus(netOf(before, settlementOf(c))).negated());
    const sides = new Set(stretches.flatMap(({ day }) => [...day.movements.map((m) => m.entryId), ...day.lines.map((l) => l.lineId)]));
    const open = (await openNow()).filter((x) => sides.has(x.ledger_entry_id ?? '') || sides.has(x.statement_line_id ?? ''));
    assert.deepEqual(booksDisagree(stretches, moved, open), [], `seeds ${stretches.map(({ day }) => day.seed).join(' ')}: the books agree after the adjustments`);
  }

  /**
   * Finance matches by hand every other ambiguous exception whose true pair is among its
   * candidates and within the tolerance (a line's one movement, or a movement's line of its own),
   * resolved `matched` with the other side named, and the book takes the pair. Returns how many.
   */
  async function matchByHand(day: ModelDay, book: { movements: Map<string, string>; lines: Set<string> }, mine: OpenException[]): Promise<number> {
    const line = new Map(day.lines.map((l) => [l.lineId, l]));
    const movement = new Map(day.movements.map((m) => [m.entryId, m]));
    let matched = 0;
    let eligible = 0;
    for (const x of mine.filter((e) => e.category === 'ambiguous' && (e.ledger_entry_id === null) !== (e.statement_line_id === null) && e.reason !== 'not_examined')) {
      // The pair the truth has: an ambiguous line's one movement, or the line that is an ambiguous movement's alone.
      const pair = x.statement_line_id !== null
        ? [...(day.owner.get(x.statement_line_id) ?? [])].map((m) => ({ m, l: x.statement_line_id! })).filter(() => day.owner.get(x.statement_line_id!)!.size === 1)
        : day.lines.filter((l) => day.owner.get(l.lineId)?.size === 1 && day.owner.get(l.lineId)!.has(x.ledger_entry_id!)).map((l) => ({ m: x.ledger_entry_id!, l: l.lineId }));
      const truth = pair.length === 1 ? pair[0] : undefined;
      if (!truth || book.movements.has(truth.m) || book.lines.has(truth.l)) continue;
      if (!(x.candidates ?? []).some((c) => (x.statement_line_id !== null ? c.ledger_entry_id === truth.m : c.statement_line_id === truth.l))) continue;
      if (line.get(truth.l)!.net.minus(movement.get(truth.m)!.amount).abs().isGreaterThan(day.runs[0].amountTolerance)) continue;
      eligible += 1;
      if (eligible % 2 === 0) continue; // the others stay for the adjustments and the late lines
      const named = x.statement_line_id !== null ? { ledger_entry_id: truth.m } : { statement_line_id: scopedLineOf(truth.l) };
      const answer = await call(desk.service.baseUrl, 'POST', `/v1/reconciliation-exceptions/${x.id}/resolve`, { resolution: 'matched', note: `model seed ${day.seed}: the partner named the pair`, ...named },
        { token: master(), idempotencyKey: randomUUID() });
      assert.equal(answer.status, 200, `seed ${day.seed}: matching ${truth.l} with ${truth.m} by hand: ${JSON.stringify(answer.body)}`);
      assert.deepEqual([answer.body.status, answer.body.resolution], ['resolved', 'matched']);
      book.movements.set(truth.m, truth.l);
      book.lines.add(truth.l);
      matched += 1;
    }
    return matched;
  }

  async function modelRun(runSeed: number, stretches: number): Promise<void> {
    const first = nextDay;
    nextDay += (stretches + 1) * STRIDE;
    const days = Array.from({ length: stretches }, (_, k) => withUuids(generateDays(runSeed + k, `e${runSeed + k}`, first + k * STRIDE)));
    const lastPosting = days.reduce((last, d) => d.movements.reduce((l, m) => Math.max(l, Date.parse(`${m.date}T12:00:00Z`)), last), 0);
    const settlementBefore = await trialBalance(Math.max(Date.now() + 1000, lastPosting + 1000));
    await seed(days);
    const seen = { days: 0, runs: 0, matched: 0, ambiguous: 0, batch: 0 };
    const books: Array<{ movements: Map<string, string>; lines: Set<string> }> = [];
    /** Each stretch's day as its queue holds it (a batch that grew, as the last run reporting it saw it). */
    const seenBy: ModelDay[] = [];
    for (const [k, day] of days.entries()) {
      nameLines(day);
      const book = { movements: new Map<string, string>(), lines: new Set<string>() };
      let seenByQueue = dayAtRun(day, 0);
      const replay = `seed ${day.seed} (replay: TEST_SEED=${day.seed} RECONCILE_E2E_STRETCHES=1)`;
      for (const [run, rules] of day.runs.entries()) {
        const statement = dayAtRun(day, run);
        const csv = statementCsv(statement, run);
        const answer = await call(desk.service.baseUrl, 'POST', '/v1/reconciliations', {
          partner: 'openbank', from: rules.from, to: rules.to, amount_tolerance: rules.amountTolerance.toFixed(2), date_tolerance_days: rules.dateToleranceDays, statement_csv: csv,
        }, { token: desk.service.config.masterKey });
        assert.equal(answer.status, 201, `${replay}: ${JSON.stringify(answer.body).slice(0, 500)}`);
        // The matched items from the CSV (every item), the others from the JSON (with their movements and candidates).
        const text = await (await fetch(`${desk.service.baseUrl}/v1/reconciliations/${answer.body.id}`, { headers: { authorization: `Bearer ${desk.service.config.masterKey}`, accept: 'text/csv' } })).text();
        const [header, ...records] = text.trim().split('\n');
        const columns = header.split(',');
        const matched = records.map((r) => Object.fromEntries(fields(r).map((v, i) => [columns[i], v === '' ? null : v]))).filter((i) => i.category === 'matched');
        const items: ReportItem[] = [...matched, ...answer.body.items].map((i: ReportItem) => ({
          ...i, statement_line_id: unscoped(i.statement_line_id), candidates: i.candidates?.map((c) => ({ ...c, statement_line_id: unscoped(c.statement_line_id) })) ?? null,
        }));
        const bookBefore = new Map(book.movements);
        assert.deepEqual(checkRun(statement, rules, items, { bookBefore }), [], `${replay}, run of ${rules.from} to ${rules.to}`);
        seenByQueue = daySeenAfter(day, seenByQueue, run, items);
        for (const i of items) if (i.category === 'matched' && i.ledger_entry_id && i.statement_line_id) { book.movements.set(i.ledger_entry_id, i.statement_line_id); book.lines.add(i.statement_line_id); }
        seen.runs += 1;
        seen.matched += answer.body.summary.matched;
        seen.ambiguous += answer.body.summary.ambiguous;
        seen.batch += answer.body.summary.batch;
      }
      books[k] = book;
      seenBy[k] = seenByQueue;
      seen.days += day.days;
    }
    // The queue as the runs left it, each stretch's exceptions against its truth; then finance
    // matches some ambiguous lines by hand (the candidate the truth names), and the queue is whole still.
    const mineOf = (open: OpenException[], day: ModelDay) => {
      const entries = new Set(day.movements.map((m) => m.entryId));
      const lines = new Set(day.lines.map((l) => l.lineId));
      return open.filter((x) => (x.ledger_entry_id !== null && entries.has(x.ledger_entry_id)) || (x.statement_line_id !== null && lines.has(x.statement_line_id)));
    };
    const covered = (day: ModelDay) => (date: string) => day.runs.some((r) => date >= r.from && date <= r.to);
    let open = await openNow();
    const handled: Array<Set<string>> = [];
    let byHand = 0;
    for (const [k, day] of days.entries()) {
      const mine = mineOf(open, day);
      assert.deepEqual(checkOpen(seenBy[k], covered(day), books[k], mine), [], `seed ${day.seed}: the open exceptions`);
      handled[k] = new Set(mine.flatMap((x) => [x.ledger_entry_id, x.statement_line_id, ...(x.category === 'batch' ? x.movements!.map((m) => m.ledger_entry_id) : [])]).filter((side): side is string => side !== null));
      byHand += await matchByHand(seenBy[k], books[k], mine);
    }
    if (byHand > 0) open = await openNow();
    const sure: SureException[] = [];
    for (const [k, day] of days.entries()) {
      const mine = mineOf(open, day);
      assert.deepEqual(checkOpen(seenBy[k], covered(day), books[k], mine), [], `seed ${day.seed}: the open exceptions after ${byHand} matches by hand`);
      for (const { exception, difference } of sureDifferences(seenBy[k], mine)) sure.push({ seed: day.seed, exception, difference });
    }
    const adjusted = await adjustEach(runSeed, sure, lastPosting);
    await expectBooksAgree(days.map((_, k) => ({ day: seenBy[k], book: books[k], handled: handled[k] })), settlementBefore, Math.max(Date.now() + 1000, lastPosting + 1000));
    const reversed = await lateLines(days, sure);
    console.log(`      ${JSON.stringify({ ...seen, by_hand: byHand, open: open.length, adjusted, nothing_to_adjust: sure.length - adjusted, unsure: open.length - sure.length, reversed })}`);
    assert.ok(seen.days >= stretches, `${seen.days} days`);
    assert.ok(adjusted > 0, `seed ${runSeed}: no sure difference to adjust`);
  }

  /**
   * The lines left off the statements arrive after all, once finance has adjusted their payments
   * (each `ledger_only`: its adjustment took the payment off the settlement account), and a batch
   * that grew after its last payment was adjusted alone lists it: each day's statement is exported
   * again with them, and reconciled over the stretch's days. Each adjusted
   * payment whose line came gets exactly one exception that reverses its adjustment, whose
   * difference is exactly the adjustment's, reversed; a second run opens none; resolved `adjusted`
   * through the route, each reversal's entry and its adjustment's cancel on the settlement account.
   * Returns how many were reversed.
   */
  async function lateLines(days: ModelDay[], sure: SureException[]): Promise<number> {
    const started = new Date(Math.max(Date.now() - 1000, settledAt));
    const reversals: Array<{ of: SureException; id: string }> = [];
    for (const day of days) {
      const adjustedAlone = sure.filter((s) => s.seed === day.seed && s.exception.category === 'ledger_only' && !s.difference.isZero());
      const movementOf = (s: SureException) => day.movements.find((m) => m.entryId === s.exception.ledger_entry_id)!;
      const onALine = (m: ModelDay['movements'][number]) => day.lines.some((l) => day.owner.get(l.lineId)?.has(m.entryId));
      const late = adjustedAlone.map(movementOf).filter((m) => m.reference !== null && !onALine(m));
      // A batch that grew after its last payment was adjusted alone lists it in this export: its line came too.
      const listedSince = adjustedAlone.map(movementOf).filter(onALine);
      const came = [...late, ...listedSince];
      if (came.length === 0) continue;
      const lines = late.map((m, i) => ({ lineId: `${day.seed}-late${i}`, reference: m.reference, currency: m.currency, amount: m.amount, fee: new Money(0), net: m.amount, valueDate: m.date, settles: null }));
      const arrived: ModelDay = { ...day, lines: [...day.lines, ...lines], owner: new Map([...day.owner, ...lines.map((l, i) => [l.lineId, new Set([late[i].entryId])] as const)]) };
      nameLines(arrived);
      const range = { from: day.runs.reduce((a, r) => (r.from < a ? r.from : a), day.runs[0].from), to: day.runs.reduce((a, r) => (r.to > a ? r.to : a), day.runs[0].to) };
      const reconcileArrived = async () => {
        const answer = await call(desk.service.baseUrl, 'POST', '/v1/reconciliations', {
          partner: 'openbank', ...range, amount_tolerance: day.runs[0].amountTolerance.toFixed(2), date_tolerance_days: day.runs[0].dateToleranceDays, statement_csv: statementCsv(arrived, day.runs.length + 1),
        }, { token: master() });
        assert.equal(answer.status, 201, `seed ${day.seed}, late lines: ${JSON.stringify(answer.body).slice(0, 500)}`);
      };
      await reconcileArrived();
      const opened = await desk.service.runtime.db('reconciliation_exceptions').whereIn('reverses_exception_id', adjustedAlone.map((s) => s.exception.id))
        .select('id', 'reverses_exception_id', 'ledger_amount', 'statement_amount', 'status');
      for (const m of came) {
        const of = adjustedAlone.find((s) => s.exception.ledger_entry_id === m.entryId)!;
        const mine = opened.filter((x) => x.reverses_exception_id === of.exception.id);
        assert.equal(mine.length, 1, `${named(of)}: one reversal once its line came, ${mine.length} found`);
        const difference = new Money(mine[0].statement_amount).minus(mine[0].ledger_amount);
        assert.equal(difference.toFixed(2), of.difference.negated().toFixed(2), `${named(of)}: the reversal undoes exactly the adjustment`);
        reversals.push({ of, id: mine[0].id });
      }
      const others = opened.filter((x) => !came.some((m) => movementOf(adjustedAlone.find((s) => s.exception.id === x.reverses_exception_id)!) === m));
      assert.equal(opened.length, came.length, `seed ${day.seed}: a reversal for each adjusted payment whose line came, and no other (also: ${JSON.stringify(others)})`);
      await reconcileArrived();
      const again = await desk.service.runtime.db('reconciliation_exceptions').whereIn('reverses_exception_id', adjustedAlone.map((s) => s.exception.id)).count({ n: '*' });
      assert.equal(Number(again[0].n), came.length, `seed ${day.seed}: reversed once, however often the day is reconciled`);
    }
    const entryOf = new Map<string, string>();
    await inFlight(reversals, ADJUSTING_WIDTH, async ({ of, id }) => {
      const answer = await adjust(id, `model seed ${of.seed}: the line came after all`);
      assert.equal(answer.status, 200, `${named(of)}: its reversal ${id}: ${JSON.stringify(answer.body)}`);
      entryOf.set(id, answer.body.adjustment_entry_id);
    });
    const posted = await adjustmentsSince(started);
    for (const { of, id } of reversals) {
      const settlement = posted.get(entryOf.get(id)!)?.postings.find((p) => p.ledger_account === settlementOf(of.exception.currency));
      assert.ok(settlement, `${named(of)}: its reversal's entry is in the journal`);
      assert.equal(new Money(settlement.amount).toFixed(2), of.difference.toFixed(2), `${named(of)}: the reversal posts the adjustment's ${of.difference.negated().toFixed(2)} back`);
    }
    return reversals.length;
  }

  const claim = 'never matches falsely, leaves every difference in exactly one exception, and adjusts each sure one exactly, through the routes';
  // The fixed seed in npm test; a fresh seed each run in the system suite, at 160 stretches.
  for (const seed of fixedSeeds([604_117_383])) it(`${claim}: 5 stretches (${replayOf(seed)})`, () => modelRun(seed, stretchesOr(5)));
  for (const seed of seeds([118_902_541])) it(`${claim}: 160 stretches (${replayOf(seed)}) @system`, () => modelRun(seed, stretchesOr(160)));
  // Stretches that once failed, kept: a batch still going on lists, in a later export, a payment a
  // busy day had left unsure (ambiguous, with no line of its own): that exception closed.
  // And the stretch of seed 1956527282: a batch that grew listed, in the late export, a payment adjusted alone before; the model expected no reversal for it.
  for (const stretch of [7058, 1956527282]) it(`${claim}: the stretch of seed ${stretch}, which once failed`, () => modelRun(stretch, 1));
});
