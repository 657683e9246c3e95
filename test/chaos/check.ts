// What the chaos suite checks once the load has stopped: every request got a decision; every
// transfer and payment reached a terminal state, and every payment acknowledged is stored once;
// every quote the client saw executed was consumed once (and no other); every balance is the
// funding its client saw acknowledged plus what its completed transfers, conversions and payments
// moved; the ledger's invariants hold; every event stream saw every event of its account once, in
// order; every webhook receiver got every event of its account; and the finance views agree: the
// trial balance nets to zero, each account's statement closes at its balance, and the ledger
// reconciles with the partners' statements without an exception.
import { Money, type Amount } from '../../ledger/money';
import { loadConfig } from '../../src/config';
import { createDb, type Db } from '../../src/db';
import { sleep } from '../bench/harness';
import type { SignedUp } from '../support/accounts';
import { call } from '../support/http';
import { violations, type CollectedEvents } from '../support/load';
import { paymentAndConversionMovements } from '../support/mixed-load';
import type { Receiver } from '../support/webhook-receiver';
import type { Decision } from './client';
import { today } from '../support/days';

export type Sent =
  | { kind: 'transfer'; decision: Decision | null }
  | { kind: 'conversion'; quoteId: string | null; decision: Decision | null }
  | { kind: 'payment'; decision: Decision | null };

/** What each account's client saw acknowledged as funding, per currency. */
export type Funding = Map<string, Map<string, Amount>>;

const accepted = (decision: Decision | null) => decision !== null && decision.status < 300;

/** Balances by account and currency as the client's own records predict them. */
async function expectedBalances(db: Db, group: SignedUp[], funding: Funding, transferIds: string[]): Promise<Map<string, Amount>> {
  const expected = new Map<string, Amount>();
  const add = (accountId: string | null, currency: string, amount: Amount) => {
    if (!accountId || !funding.has(accountId)) return;
    const key = `${accountId}|${currency}`;
    expected.set(key, (expected.get(key) ?? new Money(0)).plus(amount));
  };
  for (const [accountId, currencies] of funding) for (const [currency, amount] of currencies) add(accountId, currency, amount);
  const { rows: transfers } = await db.raw(
    `SELECT account_id, recipient_account_id, amount::text, currency, payout_amount::text, payout_currency FROM transfers WHERE id = ANY(?::uuid[]) AND status = 'completed'`,
    [transferIds],
  );
  for (const t of transfers) {
    add(t.account_id, t.currency, new Money(t.amount).negated());
    add(t.recipient_account_id, t.payout_currency, new Money(t.payout_amount));
  }
  for (const { accountId, currency, amount } of await paymentAndConversionMovements(db, group.map((m) => m.account.id))) add(accountId, currency, amount);
  return expected;
}

/** Every event of each account reached its receiver (retries may repeat one; none may be missing or foreign). */
async function webhooksComplete(db: Db, group: SignedUp[], receivers: Receiver[]): Promise<string[]> {
  const missing = async () => {
    const gaps: string[] = [];
    for (let i = 0; i < group.length; i++) {
      const { rows } = await db.raw(`SELECT id FROM account_events WHERE account_id = ?`, [group[i].account.id]);
      const got = new Set(receivers[i].received.map((r) => r.event.id as string));
      const lost = rows.filter((row: { id: string }) => !got.has(row.id)).length;
      const foreign = got.size - (rows.length - lost);
      if (lost + foreign > 0) gaps.push(`account ${i}: its webhook receiver lacks ${lost} of ${rows.length} events${foreign ? ` and got ${foreign} of other accounts` : ''}`);
    }
    return gaps;
  };
  const deadline = Date.now() + 90_000; // a delivery lost with a killed dispatcher is sent again when its lease ends
  let gaps = await missing();
  while (gaps.length > 0 && Date.now() < deadline) {
    await sleep(1_000);
    gaps = await missing();
  }
  return gaps;
}

/** The finance views over the run, read through the API (master key): what each disagrees on. */
async function financeAgrees(baseUrl: string, db: Db, group: SignedUp[], firstDay: string): Promise<string[]> {
  const failures: string[] = [];
  const master = loadConfig(process.env).masterKey;
  const trial = await call(baseUrl, 'GET', '/v1/ledger/trial-balance', undefined, { token: master });
  for (const total of trial.body.totals ?? []) if (!new Money(total.net).isZero()) failures.push(`the trial balance nets to ${total.net} ${total.currency}`);
  for (const member of group) {
    const statement = await call(baseUrl, 'GET', `/v1/accounts/me/statement?currency=USD&from=${firstDay}T00:00:00Z`, undefined, { token: member.key });
    const { rows } = await db.raw(`SELECT balance::text AS balance FROM ledger_accounts WHERE code = ?`, [`acct:${member.account.id}:available:USD`]);
    if (statement.status !== 200 || !new Money(statement.body.closing_balance).isEqualTo(rows[0]?.balance ?? 0)) {
      failures.push(`account ${member.account.id}: its USD statement closes at ${statement.body.closing_balance}, its balance is ${rows[0]?.balance}`);
    }
  }
  for (const partner of ['openbank', 'fiat']) {
    const report = await call(baseUrl, 'POST', '/v1/reconciliations', { partner, from: firstDay, to: today(), dry_run: true }, { token: master });
    const { ledger_only: ledgerOnly, statement_only: statementOnly, mismatched } = report.body.summary ?? {};
    if (report.status !== 200 || ledgerOnly + statementOnly + mismatched !== 0) {
      failures.push(`${partner} does not reconcile: ${report.status} ${JSON.stringify(report.body.summary ?? report.body)} ${JSON.stringify(report.body.items?.slice(0, 3))}`);
    }
  }
  return failures;
}

export async function check(baseUrl: string, firstDay: string, databaseUrl: string, group: SignedUp[], funding: Funding, results: Sent[], streams: CollectedEvents[], receivers: Receiver[]): Promise<string[]> {
  const failures: string[] = [];
  const db = createDb(databaseUrl, 2);
  try {
    const undecided = results.filter((r) => r.decision === null).length;
    if (undecided > 0) failures.push(`${undecided} requests got no decision`);
    const conflicts = results.filter((r) => r.decision?.status === 409).length;
    if (conflicts > 0) failures.push(`${conflicts} requests were answered 409 (a client would never learn their outcome)`);

    const ids = results.flatMap((r) => (r.kind === 'transfer' && accepted(r.decision) ? [r.decision!.body.transfer_id as string] : []));
    const deadline = Date.now() + 120_000;
    let open = -1;
    while (Date.now() < deadline) {
      const { rows } = await db.raw(`SELECT count(*)::int AS open FROM transfers WHERE id = ANY(?::uuid[]) AND status NOT IN ('completed', 'failed', 'rolled_back')`, [ids]);
      open = rows[0].open;
      if (open === 0) break;
      await sleep(500);
    }
    if (open !== 0) failures.push(`${open} transfers never reached a terminal state`);
    const { rows: stored } = await db.raw(`SELECT count(*)::int AS n FROM transfers WHERE account_id = ANY(?::uuid[])`, [group.map((m) => m.account.id)]);
    if (stored[0].n !== new Set(ids).size) failures.push(`${stored[0].n} transfers stored for ${new Set(ids).size} acknowledged`);

    const paymentIds = results.flatMap((r) => (r.kind === 'payment' && accepted(r.decision) ? [r.decision!.body.id as string] : []));
    let openPayments = -1;
    while (Date.now() < deadline) {
      const { rows } = await db.raw(`SELECT count(*)::int AS open FROM payments WHERE account_id = ANY(?::uuid[]) AND status IN ('pending', 'sent', 'authorized')`, [group.map((m) => m.account.id)]);
      openPayments = rows[0].open;
      if (openPayments === 0) break;
      await sleep(500);
    }
    if (openPayments !== 0) failures.push(`${openPayments} payments never ended`);
    const { rows: storedPayments } = await db.raw(`SELECT count(*)::int AS n FROM payments WHERE account_id = ANY(?::uuid[])`, [group.map((m) => m.account.id)]);
    if (storedPayments[0].n !== new Set(paymentIds).size) failures.push(`${storedPayments[0].n} payments stored for ${new Set(paymentIds).size} acknowledged`);

    const executed = new Set(results.flatMap((r) => (r.kind === 'conversion' && accepted(r.decision) ? [r.quoteId!] : [])));
    const { rows: consumed } = await db.raw(`SELECT id FROM fx_quotes WHERE account_id = ANY(?::uuid[]) AND consumed_at IS NOT NULL`, [group.map((m) => m.account.id)]);
    const consumedIds = new Set<string>(consumed.map((q: { id: string }) => q.id));
    const unacknowledged = [...consumedIds].filter((id) => !executed.has(id)).length;
    const lost = [...executed].filter((id) => !consumedIds.has(id)).length;
    if (unacknowledged + lost > 0) failures.push(`quotes: ${lost} executions acknowledged but not consumed, ${unacknowledged} consumed but refused to the client`);

    const expected = await expectedBalances(db, group, funding, ids);
    const { rows: balances } = await db.raw(
      `SELECT account_id, currency, sum(balance)::text AS total FROM ledger_accounts WHERE account_id = ANY(?::uuid[]) GROUP BY 1, 2`,
      [group.map((m) => m.account.id)],
    );
    for (const b of balances) {
      const want = expected.get(`${b.account_id}|${b.currency}`) ?? new Money(0);
      if (!want.isEqualTo(b.total)) failures.push(`account ${b.account_id}: ${b.currency} balance ${b.total}, expected ${want.toFixed()}`);
    }
    for (const [name, rows] of Object.entries(await violations(db))) failures.push(`ledger invariant broken: ${name} (${JSON.stringify(rows).slice(0, 200)})`);

    await sleep(5_000); // the last events reach the streams
    for (let i = 0; i < group.length; i++) {
      const { rows } = await db.raw(`SELECT count(*)::int AS n FROM account_events WHERE account_id = ?`, [group[i].account.id]);
      const seqs = streams[i].seqs;
      const inOrder = seqs.every((seq, k) => seq === k + 1);
      if (seqs.length !== rows[0].n || !inOrder) failures.push(`account ${i}: its stream saw ${seqs.length} of ${rows[0].n} events${inOrder ? '' : ', not once each in order'}`);
    }
    failures.push(...await webhooksComplete(db, group, receivers));
    failures.push(...await financeAgrees(baseUrl, db, group, firstDay));
  } finally {
    await db.destroy();
  }
  return failures;
}
