// The checks made once the load has stopped and the system is quiet: every unlearned write asked
// again to its final answer; every created transfer and payment ended as its scenario allows;
// every balance equal to the model's, through the API's balance route and in the ledger's own
// tables; nothing held; the ledger's invariants (each journal entry balanced, money conserved per
// currency, event numbering); each account's event stream gapless and in order, and its webhook
// receiver sent every event.
import type { Ended } from './event-checks';
import { Money, SETTLEMENT_CURRENCY, type Amount, type Currency } from '../../ledger/money';
import type { Db } from '../../src/db';
import { sleep } from '../bench/harness';
import { violations } from '../support/load';
import { verify } from '../support/webhook-receiver';
import type { Findings } from './findings';
import { balanceKey, type Model } from './model';
import type { World } from './world';

/** What is wrong with a stream's account_seq values against the account's `stored` events, or null. */
export function streamProblem(seqs: number[], stored: number): string | null {
  const firstBad = seqs.findIndex((seq, k) => seq !== k + 1);
  if (firstBad >= 0) return `event ${firstBad + 1} of the stream has account_seq ${seqs[firstBad]} (seqs ${seqs.slice(Math.max(0, firstBad - 2), firstBad + 3).join(',')})`;
  if (seqs.length !== stored) return `the stream saw ${seqs.length} of ${stored} events`;
  return null;
}

export interface Observed { account: string; currency: string; available: string; pending: string }

/** Each observed balance that differs from the model's (a balance the model has and none was observed is a difference too). */
export function balanceProblems(model: Model, accounts: string[], observed: Observed[]): string[] {
  const problems: string[] = [];
  const expected = model.balances();
  const seen = new Set<string>();
  for (const o of observed) {
    const key = balanceKey(o.account, o.currency);
    seen.add(key);
    const want = expected.get(key) ?? new Money(0);
    if (!want.isEqualTo(o.available)) problems.push(`${o.account} ${o.currency}: available ${o.available}, the model's ${want.toFixed()}`);
    if (!new Money(o.pending).isZero()) problems.push(`${o.account} ${o.currency}: ${o.pending} still pending once quiet`);
  }
  for (const [key, want] of expected) {
    const [account] = key.split('|');
    if (accounts.includes(account) && !seen.has(key) && !want.isZero()) problems.push(`${key}: no balance, the model's ${want.toFixed()}`);
  }
  return problems;
}

/** The model's balances rolled into settlement currencies, as the API's balance route gives them. */
export function settlementTotals(model: Model, account: string): Map<string, Amount> {
  const totals = new Map<string, Amount>();
  for (const [key, amount] of model.balances()) {
    const [owner, currency] = key.split('|');
    if (owner !== account) continue;
    const settlement = SETTLEMENT_CURRENCY[currency as Currency] ?? currency;
    totals.set(settlement, (totals.get(settlement) ?? new Money(0)).plus(amount));
  }
  return totals;
}

async function until(deadlineMs: number, done: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await sleep(1_000);
  }
  return done();
}

/** Every write whose answer its client never learned, asked again under its key to a final answer. */
export async function learnEverything(world: World): Promise<void> {
  await Promise.all(world.unlearned.splice(0).map(async (u) => {
    const answer = await world.http.decide(u.client, u.path, u.body, u.key, { token: world.members[u.client].key, headers: u.headers, deadlineMs: 120_000 });
    if (answer) u.learn(answer);
    world.findings.expect(answer !== null, 'no command left undecided', () => `${u.command.label}: no final answer under key ${u.key} after 120 s`, [u.client]);
  }));
}

/** Waits for the system to be quiet: no transfer or payment of the run open, nothing left to publish. */
export async function quiet(db: Db, world: World): Promise<boolean> {
  const ids = world.members.map((m) => m.accountId);
  return until(180_000, async () => {
    const { rows } = await db.raw(
      `SELECT (SELECT count(*) FROM transfers WHERE account_id = ANY(?::uuid[]) AND status NOT IN ('completed', 'failed', 'rolled_back'))
            + (SELECT count(*) FROM payments WHERE account_id = ANY(?::uuid[]) AND status IN ('pending', 'sent', 'authorized'))
            + (SELECT count(*) FROM outbox_rounds) AS open`, [ids, ids]);
    return Number(rows[0].open) === 0;
  });
}

/** What keeps the system from being quiet: a few of each kind, as a person looking into it would ask. */
export async function stillOpen(db: Db, world: World): Promise<string> {
  const ids = world.members.map((m) => m.accountId);
  const { rows: transfers } = await db.raw(
    `SELECT id, type, status, updated_at FROM transfers WHERE account_id = ANY(?::uuid[]) AND status NOT IN ('completed', 'failed', 'rolled_back') ORDER BY updated_at LIMIT 5`, [ids]);
  const { rows: payments } = await db.raw(
    `SELECT id, partner, status, external_id, partner_unreachable_at, submission_lease_until, unsent_end, next_poll_at, created_at FROM payments
      WHERE account_id = ANY(?::uuid[]) AND status IN ('pending', 'sent', 'authorized') ORDER BY created_at LIMIT 5`, [ids]);
  const { rows: rounds } = await db.raw(`SELECT count(*)::int AS n, min(created_at) AS oldest FROM outbox_rounds`);
  return `transfers ${JSON.stringify(transfers)}; payments ${JSON.stringify(payments)}; outbox rounds ${rounds[0].n} (oldest ${rounds[0].oldest?.toISOString() ?? 'none'})`;
}

/** Reads each created transfer and payment's final state; it must be one its scenario allows. */
export async function endEverything(db: Db, world: World): Promise<Map<string, Ended>> {
  const ended = new Map<string, Ended>();
  for (const { command, member, resolve } of world.open.splice(0)) {
    const path = command.resource!.type === 'transfer' ? `/v1/transfers/${command.resource!.id}` : `/v1/payments/${command.resource!.id}`;
    const answer = await world.http.read(member.index, path, { token: member.key, timeoutMs: 30_000 });
    if (typeof answer === 'string' || answer.status !== 200) {
      world.findings.expect(false, 'every created transfer and payment can be read', () => `${command.label}: GET ${path} ${typeof answer === 'string' ? answer : answer.status}`, [member.index]);
      continue;
    }
    // The settler's resubmission carries no sandbox scenario (README): a payment the partner made
    // from a resubmission, its request's own submission lost to a fault, may simply complete.
    const madeWithoutScenario = command.resource!.type === 'payment' && answer.body.status === 'completed'
      && (await db.raw('SELECT 1 FROM mock_rails.payments WHERE reference = ? AND scenario IS NULL', [command.resource!.id])).rows.length > 0;
    if (madeWithoutScenario) command.allowedFinal = [...new Set([...command.allowedFinal, 'completed'])];
    // A partner down past a payment's pending deadline fails nothing: the deadline counts from its
    // return (README, Add funds), so a payment behind an outage ends as its scenario allows.
    world.findings.expect(command.allowedFinal.includes(answer.body.status), 'every transfer and payment ends as its scenario allows',
      () => `${command.label}: ${answer.body.status} (${JSON.stringify(answer.body.failure)}), allowed ${command.allowedFinal.join('|')}`, [member.index]);
    ended.set(command.resource!.id, { type: command.resource!.type as Ended['type'], status: answer.body.status, account: member.accountId, client: member.index, label: command.label });
    resolve(answer.body);
  }
  return ended;
}

export async function finalChecks(db: Db, world: World): Promise<void> {
  const { findings, model, members } = world;
  const f = (check: string, detail: string, clients: number[] = []) => findings.expect(false, check, () => detail, clients);
  for (const command of model.undecided()) f('no command left undecided', `${command.label} is ${command.state}`, [command.client]);

  const accounts = members.map((m) => m.accountId);
  const { rows } = await db.raw(
    `SELECT account_id, currency, coalesce(sum(balance) FILTER (WHERE kind = 'available'), 0)::text AS available, coalesce(sum(balance) FILTER (WHERE kind = 'pending'), 0)::text AS pending
     FROM ledger_accounts WHERE account_id = ANY(?::uuid[]) GROUP BY 1, 2`, [accounts]);
  const problems = balanceProblems(model, accounts, rows.map((r: any) => ({ account: r.account_id, currency: r.currency, available: r.available, pending: r.pending })));
  for (const p of problems) f("every balance equal to the model's (ledger tables)", p, members.filter((m) => p.startsWith(m.accountId)).map((m) => m.index));
  if (problems.length === 0) findings.pass();

  for (const member of members) {
    const answer = await world.http.read(member.index, '/v1/accounts/me/balance', { token: member.token, timeoutMs: 30_000 });
    if (typeof answer === 'string' || answer.status !== 200) { f("every balance equal to the model's (API)", `balance of c${member.index}: ${typeof answer === 'string' ? answer : answer.status}`, [member.index]); continue; }
    const want = settlementTotals(model, member.accountId);
    for (const total of answer.body.totals as Array<{ currency: string; available: string; pending: string }>) {
      const expected = want.get(total.currency) ?? new Money(0);
      findings.expect(expected.isEqualTo(total.available) && new Money(total.pending).isZero(), "every balance equal to the model's (API)",
        () => `c${member.index} ${total.currency}: available ${total.available}, pending ${total.pending}; the model's ${expected.toFixed()}`, [member.index]);
    }
  }

  for (const [name, found] of Object.entries(await violations(db))) f(`ledger invariant: ${name}`, JSON.stringify(found).slice(0, 300));
  // Every kind of held funds (a transfer's pending, a hold's on main or on a wallet) ends paid or
  // released: every transfer ended, and every hold was voided, captured or expired.
  const { rows: held } = await db.raw(`SELECT code, kind, balance::text FROM ledger_accounts WHERE kind IN ('pending', 'held', 'wallet_held') AND balance <> 0 LIMIT 5`);
  findings.expect(held.length === 0, 'no funds left held, of any kind, once everything ended', () => JSON.stringify(held), []);

  await partnersAgree(db, world);
  await partnerBooksAsModelled(db, world);

  await sleep(3_000); // the last events reach the streams
  for (const member of members) {
    const { rows: stored } = await db.raw(`SELECT count(*)::int AS n FROM account_events WHERE account_id = ?`, [member.accountId]);
    const problem = streamProblem(member.stream.seqs, stored[0].n);
    findings.expect(problem === null, "each account's event stream gapless and in order", () => `c${member.index}: ${problem}`, [member.index]);
  }
  await webhooksDelivered(db, world, findings);
}

/**
 * The ledger and the partner agree on every payment the run sent to a rail: a transfer or payment
 * the ledger completed was paid by the partner, and one the ledger ended otherwise (its hold
 * released) was not. Read from the mock partners' own book, as their statement would show it.
 */
async function partnersAgree(db: Db, world: World): Promise<void> {
  const members = new Map(world.members.map((m) => [m.accountId, m.index]));
  const { rows } = await db.raw(
    `SELECT 'transfer' AS kind, t.id, t.account_id, t.status, mp.status AS partner_status FROM transfers t LEFT JOIN mock_rails.payments mp ON mp.reference = t.id::text
      WHERE t.type = 'external' AND t.account_id = ANY(?::uuid[]) AND (t.status = 'completed') <> (mp.status IS NOT DISTINCT FROM 'completed')
     UNION ALL
     SELECT 'payment', p.id, p.account_id, p.status, mp.status FROM payments p LEFT JOIN mock_rails.payments mp ON mp.reference = p.id::text
      WHERE p.account_id = ANY(?::uuid[]) AND (p.status = 'completed') <> (mp.status IS NOT DISTINCT FROM 'completed')`, [[...members.keys()], [...members.keys()]]);
  for (const row of rows) {
    world.findings.expect(false, 'the ledger and the partner agree on every payment', () => `${row.kind} ${row.id}: ${row.status} in the ledger, ${row.partner_status ?? 'absent'} at the partner`, [members.get(row.account_id)!]);
  }
  if (rows.length === 0) world.findings.pass();
}

/**
 * Every partner's book as the model expects it, read from the mock partners' own tables (the run's
 * database is its own): a payment under each reference the model saw complete, of the amount and
 * currency it predicts; none completed under a reference it saw end otherwise; and no payment at
 * all under a reference the model never sent to a partner (an internal transfer, or nothing).
 */
async function partnerBooksAsModelled(db: Db, world: World): Promise<void> {
  const { rows } = await db.raw(`SELECT partner, reference, amount::text, currency, status FROM mock_rails.payments`);
  const atPartner = new Map<string, any>(rows.map((r: any) => [r.reference, r]));
  const problems: Array<[number, string]> = [];
  for (const [reference, entry] of world.partnerBook) {
    const row = atPartner.get(reference);
    if (entry.paid === null) {
      if (row?.status === 'completed') problems.push([entry.client, `${entry.label} (${reference}): ended unpaid, but ${row.partner} completed ${row.amount} ${row.currency}`]);
    } else if (!row || row.status !== 'completed' || !entry.paid.amount.isEqualTo(row.amount) || row.currency !== entry.paid.currency) {
      problems.push([entry.client, `${entry.label} (${reference}): the model expects ${entry.paid.amount.toFixed(2)} ${entry.paid.currency} completed, the partner has ${row ? `${row.amount} ${row.currency} ${row.status} (${row.partner})` : 'nothing'}`]);
    }
  }
  for (const row of rows) {
    if (!world.partnerBook.has(row.reference)) problems.push([-1, `${row.partner} holds ${row.amount} ${row.currency} ${row.status} under ${row.reference}, which the run never sent to a partner`]);
  }
  const paid = [...world.partnerBook.values()].filter((e) => e.paid !== null).length;
  console.log(`  partner books: ${world.partnerBook.size} references the model sent to a partner (${paid} paid), ${rows.length} payments in the partners' books`);
  for (const [client, problem] of problems) world.findings.expect(false, "each partner's book as the model expects, with no orphan", () => problem, client >= 0 ? [client] : []);
  if (problems.length === 0) world.findings.pass();
}

async function webhooksDelivered(db: Db, world: World, findings: Findings): Promise<void> {
  const missing = async () => {
    const gaps: Array<[number, string]> = [];
    for (const member of world.members) {
      const { rows } = await db.raw(`SELECT id FROM account_events WHERE account_id = ?`, [member.accountId]);
      const got = new Set(member.receiver.received.map((r) => r.event.id as string));
      const lost = rows.filter((row: { id: string }) => !got.has(row.id)).length;
      if (lost > 0) gaps.push([member.index, `c${member.index}: its webhook receiver lacks ${lost} of ${rows.length} events`]);
    }
    return gaps;
  };
  let gaps = await missing();
  const deadline = Date.now() + 90_000; // a delivery lost with a killed dispatcher is sent again when its lease ends
  while (gaps.length > 0 && Date.now() < deadline) { await sleep(1_000); gaps = await missing(); }
  for (const [client, gap] of gaps) findings.expect(false, 'every event delivered to a live webhook endpoint', () => gap, [client]);
  // Signed as the README tells a receiver to check (the tolerance covers the run: a delivery is checked at its end).
  for (const member of world.members) {
    const unsigned = member.receiver.received.filter((r) => !verify(member.webhookSecret, r.headers, r.body, 3_600));
    findings.expect(unsigned.length === 0, 'every webhook delivery signed', () => `c${member.index}: ${unsigned.length} of ${member.receiver.received.length} deliveries fail the signature check`, [member.index]);
  }
  if (gaps.length === 0) findings.pass();
}
