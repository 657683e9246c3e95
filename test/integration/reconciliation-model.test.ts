// The model-based test of matching (test/support/reconcile-model.ts) end to end: stretches of
// generated days seeded into the ledger in Postgres, their statements uploaded to
// POST /v1/reconciliations by several runs over overlapping days, each report (its JSON items and
// its CSV) and finally the open exceptions checked against the truth by the same oracle as the
// unit test's. RECONCILE_E2E_SEED replays a seed (printed); RECONCILE_E2E_STRETCHES sets how many
// stretches of 1 to 3 days (160 by default, some 320 days).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ReportItem } from '../../src/reconciliation/match';
import { FinanceDesk } from '../support/finance-desk';
import { call } from '../support/http';
import { checkOpen, checkRun, generateDays, type ModelDay } from '../support/reconcile-model';
import { ensureSettlementAccounts, postSeededEntries } from '../support/seed-ledger';

const SEED = Number(process.env.RECONCILE_E2E_SEED ?? Math.floor(Math.random() * 1_000_000_000));
const STRETCHES = Number(process.env.RECONCILE_E2E_STRETCHES ?? 160);
/** Days between two stretches' first days: their days and tolerances never meet. */
const STRIDE = 12;

/** The day with journal entry ids for movements (uuids), the truth rewritten to them. */
function withUuids(day: ModelDay): ModelDay {
  const ids = new Map(day.movements.map((m) => [m.entryId, randomUUID()]));
  return {
    ...day,
    movements: day.movements.map((m) => ({ ...m, entryId: ids.get(m.entryId)! })),
    owner: new Map([...day.owner].map(([line, moves]) => [line, new Set([...moves].map((m) => ids.get(m)!))])),
  };
}

function statementCsv(day: ModelDay): string {
  const rows = day.lines.map((l) => [l.lineId, l.reference ?? '', l.amount.toFixed(2), l.fee.toFixed(2), l.net.toFixed(2), l.currency, l.valueDate, (l.settles ?? []).join(' ')].join(','));
  return `id,reference,amount,fee,net,currency,value_date,settles\n${rows.join('\n')}\n`;
}

/** A CSV record's fields (the report's CSV quotes a field with a comma or quote). */
function fields(record: string): string[] {
  const out: string[] = [];
  for (let i = 0; i <= record.length;) {
    if (record[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const q = record.indexOf('"', j);
        value += record.slice(j, q);
        if (record[q + 1] === '"') { value += '"'; j = q + 2; } else { i = q + 2; break; }
      }
      out.push(value);
    } else {
      const comma = record.indexOf(',', i);
      out.push(record.slice(i, comma < 0 ? record.length : comma));
      i = comma < 0 ? record.length + 1 : comma + 1;
    }
  }
  return out;
}

describe('reconciliation matching against a model of the truth, end to end', function () {
  this.timeout(300_000);
  const desk = new FinanceDesk('reconcile_model');
  before(() => desk.start({}, () => undefined));
  after(() => desk.stop());

  async function seed(days: ModelDay[]): Promise<void> {
    const moves = days.flatMap((d) => d.movements);
    const accountId = desk.owner.account.id;
    await desk.service.runtime.db.transaction(async (trx) => {
      await ensureSettlementAccounts(trx, accountId);
      await trx.raw(`CREATE TEMP TABLE seed ON COMMIT DROP AS
        SELECT * FROM unnest(?::uuid[], ?::text[], ?::numeric[], ?::timestamptz[]) WITH ORDINALITY AS s(entry_id, reference, amount, at, i)`,
      [moves.map((m) => m.entryId), moves.map((m) => m.reference) as unknown as string[], moves.map((m) => m.amount.toFixed(2)), moves.map((m) => `${m.date}T12:00:00Z`)]);
      await trx.raw(`INSERT INTO payments (id, account_id, customer_id, command_id, partner, direction, kind, amount, currency, status, external_id, idempotency_key, created_at, updated_at, completed_at)
        SELECT entry_id, ?, ?, 'model:' || entry_id, 'openbank', CASE WHEN amount > 0 THEN 'inbound' ELSE 'outbound' END, CASE WHEN amount > 0 THEN 'add_funds' ELSE 'send' END,
               abs(amount), 'USD', 'completed', reference, 'model-' || entry_id, at, at, at FROM seed`, [accountId, desk.customerId]);
      await trx.raw(`INSERT INTO journal_entries (id, kind, command_id, payment_id, created_at) SELECT entry_id, 'payment_settle', 'model:' || entry_id, entry_id, at FROM seed`);
      await postSeededEntries(trx, accountId);
    });
  }

  it(`never matches falsely, and leaves every difference in exactly one exception, through the routes (seed ${SEED})`, async () => {
    console.log(`      reconcile model end to end: seed ${SEED}, ${STRETCHES} stretches (replay: RECONCILE_E2E_SEED=${SEED})`);
    const days = Array.from({ length: STRETCHES }, (_, k) => withUuids(generateDays(SEED + k, `e${SEED + k}`, 40 + k * STRIDE)));
    await seed(days);
    const seen = { days: 0, runs: 0, matched: 0, ambiguous: 0, batch: 0 };
    const books: Array<{ movements: Map<string, string>; lines: Set<string> }> = [];
    for (const [k, day] of days.entries()) {
      const csv = statementCsv(day);
      const book = { movements: new Map<string, string>(), lines: new Set<string>() };
      const replay = `seed ${day.seed} (replay: RECONCILE_E2E_SEED=${day.seed} RECONCILE_E2E_STRETCHES=1)`;
      for (const rules of day.runs) {
        const answer = await call(desk.service.baseUrl, 'POST', '/v1/reconciliations', {
          partner: 'openbank', from: rules.from, to: rules.to, amount_tolerance: '0.00', date_tolerance_days: rules.dateToleranceDays, statement_csv: csv,
        }, { token: desk.service.config.masterKey });
        assert.equal(answer.status, 201, `${replay}: ${JSON.stringify(answer.body).slice(0, 500)}`);
        const unscoped = (id: string | null) => (id === null ? null : id.slice(id.indexOf(':') + 1));
        // The matched items from the CSV (every item), the others from the JSON (with their movements and candidates).
        const text = await (await fetch(`${desk.service.baseUrl}/v1/reconciliations/${answer.body.id}`, { headers: { authorization: `Bearer ${desk.service.config.masterKey}`, accept: 'text/csv' } })).text();
        const [header, ...records] = text.trim().split('\n');
        const columns = header.split(',');
        const matched = records.map((r) => Object.fromEntries(fields(r).map((v, i) => [columns[i], v === '' ? null : v]))).filter((i) => i.category === 'matched');
        const items: ReportItem[] = [...matched, ...answer.body.items].map((i: ReportItem) => ({
          ...i, statement_line_id: unscoped(i.statement_line_id), candidates: i.candidates?.map((c) => ({ ...c, statement_line_id: unscoped(c.statement_line_id) })) ?? null,
        }));
        const bookBefore = new Map(book.movements);
        assert.deepEqual(checkRun(day, rules, items, { bookBefore }), [], `${replay}, run of ${rules.from} to ${rules.to}`);
        for (const i of items) if (i.category === 'matched' && i.ledger_entry_id && i.statement_line_id) { book.movements.set(i.ledger_entry_id, i.statement_line_id); book.lines.add(i.statement_line_id); }
        seen.runs += 1;
        seen.matched += answer.body.summary.matched;
        seen.ambiguous += answer.body.summary.ambiguous;
        seen.batch += answer.body.summary.batch;
      }
      books[k] = book;
      seen.days += day.days;
    }
    // The queue as the runs left it, each stretch's exceptions against its truth.
    const open = await desk.service.runtime.db('reconciliation_exceptions').where({ partner: 'openbank', status: 'open' })
      .select('ledger_entry_id', 'statement_line_id', 'category', 'ledger_amount', 'statement_amount', 'movements', 'candidates');
    for (const [k, day] of days.entries()) {
      const entries = new Set(day.movements.map((m) => m.entryId));
      const lines = new Set(day.lines.map((l) => l.lineId));
      const mine = (open as ReportItem[]).map((x) => ({ ...x, statement_line_id: x.statement_line_id === null ? null : x.statement_line_id.slice(x.statement_line_id.indexOf(':') + 1) }))
        .filter((x) => (x.ledger_entry_id !== null && entries.has(x.ledger_entry_id)) || (x.statement_line_id !== null && lines.has(x.statement_line_id)));
      const covered = (date: string) => day.runs.some((r) => date >= r.from && date <= r.to);
      assert.deepEqual(checkOpen(day, covered, books[k], mine), [], `seed ${day.seed}: the open exceptions`);
    }
    console.log(`      ${JSON.stringify(seen)}`);
    assert.ok(seen.days >= STRETCHES, `${seen.days} days`);
  });
});
