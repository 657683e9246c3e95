// The chaos suite (`npm run chaos`; `-- --short` for CI): under a steady load of transfers, it
// SIGKILLs in turn Kafka, Redis, Postgres, the ledger process, the partner dispatcher and the API
// process, brings each back with the project's own commands, and then checks that every request
// got a decision, every transfer reached a terminal state, every balance is its funding plus what
// its completed transfers moved, the journal balances, and every event stream saw every event of
// its account once, in order. It kills the local stack's servers: run it on a machine of your own.
import { Money, type Amount } from '../../ledger/money';
import { createDb } from '../../src/db';
import { benchNames, recreateDatabase, sleep } from '../bench/harness';
import { signUp, type SignedUp } from '../support/accounts';
import { collectEvents, violations, type CollectedEvents } from '../support/load';
import { decide, type Decision } from './client';
import { killServer, restartStack, RoleProcess } from './components';

const SHORT = process.argv.includes('--short');
const ACCOUNTS = SHORT ? 12 : 40;
const RATE_PER_S = SHORT ? 15 : 40;
const STEADY_S = SHORT ? 6 : 60; // load between two kills
const DOWN_S = 3; // how long a killed component stays down
const FUNDING = '1000.00';
const DECISION_DEADLINE_MS = 180_000;

const names = benchNames('chaos');
const roles = {
  rails: new RoleProcess({ name: 'mock rails', roles: 'mock-rails', port: 4700, http: false }, names.databaseUrl),
  workers: new RoleProcess({ name: 'partner dispatcher', roles: 'partners,request-logs', port: 4710, http: false, extraEnv: { MOCK_RAILS_URL: 'http://127.0.0.1:4701' } }, names.databaseUrl),
  ledger: new RoleProcess({ name: 'ledger', roles: 'ledger', port: 4720, http: false }, names.databaseUrl),
  api: new RoleProcess({ name: 'api', roles: 'api,notifier', port: 4730, http: true, extraEnv: { MOCK_RAILS_URL: 'http://127.0.0.1:4701' } }, names.databaseUrl),
};
const baseUrl = 'http://127.0.0.1:4730';

interface Sent { from: SignedUp; to: SignedUp; amount: string; decision: Decision | null }

const centsText = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

/** Transfers at RATE_PER_S until `stop` is set; each runs its own retries to a decision. */
function steadyLoad(group: SignedUp[], sent: Promise<Sent>[], stop: { now: boolean }): Promise<void> {
  let i = 0;
  return (async () => {
    const started = Date.now();
    while (!stop.now) {
      const from = group[i % group.length];
      const to = group[(i * 7 + 1) % group.length] === from ? group[(i + 1) % group.length] : group[(i * 7 + 1) % group.length];
      const external = i % 4 === 3;
      const amount = centsText(100 + (i * 37) % 900);
      const viban = to.vibans.find((v: any) => v.currency === 'USD') as any;
      const body = external
        ? { amount, currency: 'USD', recipient: { email: to.account.email, name: 'Member', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: 'USD' } } }
        : { amount, currency: 'USD', recipient_email: to.account.email };
      sent.push(decide(baseUrl, from.key, '/v1/transfers', body, DECISION_DEADLINE_MS).then((decision) => ({ from, to, amount, decision })));
      i++;
      const due = started + (i * 1000) / RATE_PER_S;
      if (due > Date.now()) await sleep(due - Date.now());
    }
  })();
}

async function untilDecided(group: SignedUp[], since: number): Promise<number> {
  // The first transfer decided after `since`: the service works again.
  for (;;) {
    const probe = await decide(baseUrl, group[0].key, '/v1/sandbox/faucet', { currency: 'EUR', amount: '1.00' }, 120_000);
    if (probe && probe.status < 300) return Date.now() - since;
  }
}

async function main(): Promise<void> {
  await recreateDatabase(names.databaseUrl);
  for (const role of Object.values(roles)) await role.start();
  const group: SignedUp[] = [];
  for (let i = 0; i < ACCOUNTS; i++) group.push(await signUp(baseUrl));
  // Streams open before the first event: each must deliver every event of its account, 1..n.
  const streams: CollectedEvents[] = await Promise.all(group.map((m) => collectEvents(baseUrl, m.token)));
  for (const member of group) {
    const funded = await decide(baseUrl, member.key, '/v1/sandbox/faucet', { currency: 'USD', amount: FUNDING }, 60_000);
    if (funded?.status !== 201 && funded?.status !== 200) throw new Error(`funding failed: ${JSON.stringify(funded)}`);
  }

  const sent: Promise<Sent>[] = [];
  const stop = { now: false };
  const load = steadyLoad(group, sent, stop);
  const recovery: Array<[string, number]> = [];
  const kills: Array<[string, () => Promise<void>, () => Promise<void>]> = [
    ['kafka', () => killServer('kafka'), restartStack],
    ['redis', () => killServer('redis'), restartStack],
    ['postgres', () => killServer('postgres'), restartStack],
    ['ledger process', async () => roles.ledger.kill(), () => roles.ledger.start()],
    ['partner dispatcher', async () => roles.workers.kill(), () => roles.workers.start()],
    ['api process', async () => roles.api.kill(), () => roles.api.start()],
  ];
  for (const [what, kill, bringBack] of kills) {
    await sleep(STEADY_S * 1000);
    const killedAt = Date.now();
    console.log(`chaos: SIGKILL ${what}`);
    await kill();
    await sleep(DOWN_S * 1000);
    await bringBack();
    recovery.push([what, await untilDecided(group, killedAt)]);
    console.log(`chaos: ${what} back; first decision ${recovery.at(-1)![1]} ms after the kill`);
  }
  await sleep(STEADY_S * 1000);
  stop.now = true;
  await load;
  const results = await Promise.all(sent);
  const failures = await check(group, results, streams);
  streams.forEach((s) => s.close());

  console.log(`\nchaos ${SHORT ? 'short' : 'long'} run: ${results.length} transfers sent at ${RATE_PER_S}/s over ${ACCOUNTS} accounts`);
  const byStatus = new Map<string, number>();
  for (const r of results) byStatus.set(String(r.decision?.status ?? 'undecided'), (byStatus.get(String(r.decision?.status ?? 'undecided')) ?? 0) + 1);
  console.log(`  decisions: ${[...byStatus].map(([s, n]) => `${s}×${n}`).join(' ')}; retries: ${results.reduce((t, r) => t + (r.decision?.attempts ?? 0) - 1, 0)}`);
  for (const [what, ms] of recovery) console.log(`  ${what.padEnd(20)} recovered in ${(ms / 1000).toFixed(1)} s (kill to first decision, ${DOWN_S} s down)`);
  console.log(`  events seen on SSE: ${streams.reduce((t, s) => t + s.seqs.length, 0)} over ${streams.reduce((t, s) => t + s.connections, 0)} connections`);
  console.log(failures.length === 0 ? '  every check passed: nothing lost, nothing doubled' : `  FAILED:\n    ${failures.join('\n    ')}`);
  for (const role of Object.values(roles).reverse()) await role.stop();
  process.exit(failures.length === 0 ? 0 : 1);
}

async function check(group: SignedUp[], results: Sent[], streams: CollectedEvents[]): Promise<string[]> {
  const failures: string[] = [];
  const db = createDb(names.databaseUrl, 2);
  try {
    const undecided = results.filter((r) => r.decision === null).length;
    if (undecided > 0) failures.push(`${undecided} requests got no decision`);
    const conflicts = results.filter((r) => r.decision?.status === 409).length;
    if (conflicts > 0) failures.push(`${conflicts} requests were answered 409 (a client would never learn their outcome)`);
    const ids = results.filter((r) => r.decision && r.decision.status < 300).map((r) => r.decision!.body.transfer_id as string);
    const deadline = Date.now() + 120_000;
    let open = -1;
    while (Date.now() < deadline) {
      const { rows } = await db.raw(`SELECT count(*)::int AS open FROM transfers WHERE id = ANY(?::uuid[]) AND status NOT IN ('completed', 'failed', 'rolled_back')`, [ids]);
      open = rows[0].open;
      if (open === 0) break;
      await sleep(500);
    }
    if (open !== 0) failures.push(`${open} transfers never reached a terminal state`);
    const { rows: stored } = await db.raw(`SELECT id, account_id, recipient_account_id, amount::text, status FROM transfers WHERE account_id = ANY(?::uuid[])`, [group.map((m) => m.account.id)]);
    if (stored.length !== new Set(ids).size) failures.push(`${stored.length} transfers stored for ${new Set(ids).size} acknowledged`);
    const expected = new Map<string, Amount>(group.map((m) => [m.account.id, new Money(FUNDING)]));
    for (const t of stored) {
      if (t.status !== 'completed') continue;
      expected.set(t.account_id, expected.get(t.account_id)!.minus(t.amount));
      if (expected.has(t.recipient_account_id)) expected.set(t.recipient_account_id, expected.get(t.recipient_account_id)!.plus(t.amount));
    }
    const { rows: balances } = await db.raw(`SELECT account_id, sum(balance)::text AS total FROM ledger_accounts WHERE account_id = ANY(?::uuid[]) AND currency = 'USD' GROUP BY 1`, [group.map((m) => m.account.id)]);
    for (const b of balances) {
      if (!expected.get(b.account_id)!.isEqualTo(b.total)) failures.push(`account ${b.account_id}: balance ${b.total}, expected ${expected.get(b.account_id)!.toFixed()}`);
    }
    for (const [name, rows] of Object.entries(await violations(db))) failures.push(`ledger invariant broken: ${name} (${JSON.stringify(rows).slice(0, 200)})`);
    await sleep(5_000); // the last events reach the streams
    for (let i = 0; i < group.length; i++) {
      const { rows } = await db.raw(`SELECT count(*)::int AS n FROM outbox WHERE topic = 'domain.events' AND account_id = ?`, [group[i].account.id]);
      const seqs = streams[i].seqs;
      const inOrder = seqs.every((seq, k) => seq === k + 1);
      if (seqs.length !== rows[0].n || !inOrder) failures.push(`account ${i}: its stream saw ${seqs.length} of ${rows[0].n} events${inOrder ? '' : ', not once each in order'}`);
    }
  } finally {
    await db.destroy();
  }
  return failures;
}

main().catch((error) => {
  console.error('chaos run failed:', error);
  for (const role of Object.values(roles)) role.kill(); // leave no process of the run behind
  process.exit(1);
});
