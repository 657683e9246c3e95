// The chaos suite (`npm run chaos`; `-- --short` for CI): under a steady load of transfers (some
// paid out in another currency) and FX conversions (a quote, then its execution), it SIGKILLs in
// turn Kafka, Redis, Postgres, the ledger process, the partner and webhook dispatchers and the API
// process, brings each back with the project's own commands, and then checks (check.ts) that
// nothing was lost or doubled, and that every account's event stream and webhook receiver got every
// event of the account. It kills the local stack's servers: run it on a machine of your own.
import { Money } from '../../ledger/money';
import { benchNames, recreateDatabase, sleep } from '../bench/harness';
import { signUp, type SignedUp } from '../support/accounts';
import { collectEvents, type CollectedEvents } from '../support/load';
import { BANK_PAYEE } from '../support/mixed-load';
import { linkCustomer } from '../support/partner-links';
import { startReceiver, type Receiver } from '../support/webhook-receiver';
import { check, type Funding, type Sent } from './check';
import { decide } from './client';
import { killServer, restartStack, RoleProcess } from './components';
import { today } from '../support/days';

const SHORT = process.argv.includes('--short');
const ACCOUNTS = SHORT ? 12 : 40;
const RATE_PER_S = SHORT ? 15 : 40;
const STEADY_S = SHORT ? 6 : 60; // load between two kills
const DOWN_S = 3; // how long a killed component stays down
const FUNDING = '1000.00';
const DECISION_DEADLINE_MS = 180_000;
const SCENARIOS = ['outage', 'lost_answer', 'decline', 'error', 'reverse'];

const names = benchNames('chaos');
const roles = {
  // PUBLIC_URL: the partners send a customer's browser back to the API's callback.
  rails: new RoleProcess({ name: 'mock rails', roles: 'mock-rails', port: 4700, http: false, extraEnv: { PUBLIC_URL: 'http://127.0.0.1:4730' } }, names.databaseUrl),
  workers: new RoleProcess({ name: 'partner and webhook dispatchers', roles: 'partners,webhooks,request-logs', port: 4710, http: false, extraEnv: { MOCK_RAILS_URL: 'http://127.0.0.1:4701' } }, names.databaseUrl),
  ledger: new RoleProcess({ name: 'ledger', roles: 'ledger', port: 4720, http: false }, names.databaseUrl),
  api: new RoleProcess({ name: 'api', roles: 'api,notifier', port: 4730, http: true, extraEnv: { MOCK_RAILS_URL: 'http://127.0.0.1:4701', PUBLIC_URL: 'http://127.0.0.1:4730' } }, names.databaseUrl),
};
const baseUrl = 'http://127.0.0.1:4730';

/** A member of the load: an account with a customer linked with openbank and fiat. */
type Member = SignedUp & { customerId: string };

const centsText = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

/** A conversion as a client makes one: a persisted quote, then its execution, each retried to a decision. */
async function convert(member: SignedUp, fromCurrency: string, toCurrency: string, amount: string): Promise<Sent> {
  const quote = await decide(baseUrl, member.key, '/v1/fx/quote', { from_currency: fromCurrency, to_currency: toCurrency, from_amount: amount }, DECISION_DEADLINE_MS);
  if (!quote || quote.status >= 300) return { kind: 'conversion', quoteId: null, decision: quote };
  const decision = await decide(baseUrl, member.key, '/v1/fx/execute', { quote_id: quote.body.id }, DECISION_DEADLINE_MS);
  return { kind: 'conversion', quoteId: quote.body.id, decision };
}

/** A payment of the member's customer: funds added through openbank, or euros sent to a bank through fiat. */
function pay(member: Member, i: number, amount: string): Promise<Sent> {
  const [path, body] = i % 16 === 1
    ? ['/v1/payments/add-funds', { customer_id: member.customerId, partner: 'openbank', amount, currency: 'USD' }]
    : ['/v1/payments/send', { customer_id: member.customerId, partner: 'fiat', amount, currency: 'EUR', purpose: 'chaos', payee: BANK_PAYEE }];
  return decide(baseUrl, member.key, path, body, DECISION_DEADLINE_MS).then((decision) => ({ kind: 'payment', decision }));
}

/**
 * Requests at RATE_PER_S until `stop` is set, each retried to a decision: of every 8, one is a
 * conversion, one a payment (funds added, or euros sent), two are external transfers (one paid
 * out in euros) and the rest internal transfers; some external transfers ask the rail for a
 * failure (Sandbox-Scenario).
 */
function steadyLoad(group: Member[], sent: Promise<Sent>[], stop: { now: boolean }): Promise<void> {
  let i = 0;
  return (async () => {
    const started = Date.now();
    while (!stop.now) {
      const from = group[i % group.length];
      const to = group[(i * 7 + 1) % group.length] === from ? group[(i + 1) % group.length] : group[(i * 7 + 1) % group.length];
      const amount = centsText(100 + (i * 37) % 900);
      if (i % 8 === 5) {
        sent.push(i % 16 === 5 ? convert(from, 'USD', 'EUR', amount) : convert(from, 'EUR', 'USD', amount));
      } else if (i % 8 === 1) {
        sent.push(pay(from, i, amount));
      } else {
        const payoutCurrency = i % 8 === 7 ? 'EUR' : 'USD';
        const viban = to.vibans.find((v: any) => v.currency === payoutCurrency) as any;
        const body = i % 8 === 3 || i % 8 === 7
          ? { amount, currency: 'USD', recipient: { email: to.account.email, name: 'Member', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency: payoutCurrency } } }
          : { amount, currency: 'USD', recipient_email: to.account.email };
        // Of the external transfers in dollars, every other one asks the rail for a failure.
        const scenario = i % 16 === 3 ? SCENARIOS[Math.floor(i / 16) % SCENARIOS.length] : null;
        const headers: Record<string, string> = scenario ? { 'Sandbox-Scenario': scenario } : {};
        sent.push(decide(baseUrl, from.key, '/v1/transfers', body, DECISION_DEADLINE_MS, headers).then((decision) => ({ kind: 'transfer', decision })));
      }
      i++;
      const due = started + (i * 1000) / RATE_PER_S;
      if (due > Date.now()) await sleep(due - Date.now());
    }
  })();
}

/** Records a faucet credit the client saw acknowledged. */
function credited(funding: Funding, member: SignedUp, currency: string, amount: string): void {
  const currencies = funding.get(member.account.id) ?? new Map();
  currencies.set(currency, (currencies.get(currency) ?? new Money(0)).plus(amount));
  funding.set(member.account.id, currencies);
}

async function untilDecided(group: Member[], funding: Funding, since: number): Promise<number> {
  // The first money movement decided after `since`: the service works again.
  for (;;) {
    const probe = await decide(baseUrl, group[0].key, '/v1/sandbox/faucet', { currency: 'GBP', amount: '1.00' }, 120_000);
    if (probe && probe.status < 300) {
      credited(funding, group[0], 'GBP', '1.00');
      return Date.now() - since;
    }
  }
}

async function main(): Promise<void> {
  const firstDay = today();
  await recreateDatabase(names.databaseUrl);
  for (const role of Object.values(roles)) await role.start();
  const group: Member[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const member = await signUp(baseUrl);
    const customer = await decide(baseUrl, member.key, '/v1/customers', { email: `chaos-${member.account.id}@example.com`, business_name: 'Chaos Customer', country_code: 'DE' }, 60_000);
    for (const partner of ['openbank', 'fiat']) await linkCustomer(baseUrl, member.key, customer!.body.id, partner);
    group.push({ ...member, customerId: customer!.body.id });
  }
  // Streams open and receivers subscribed before the first event: each must get every event of its
  // account. A receiver fails one request in ten, so retries are part of the run.
  const streams: CollectedEvents[] = await Promise.all(group.map((m) => collectEvents(baseUrl, m.token)));
  const receivers: Receiver[] = await Promise.all(group.map(async (member) => {
    const receiver = await startReceiver((_, n) => (n % 10 === 0 ? { status: 503 } : { status: 200 }));
    const endpoint = await decide(baseUrl, member.key, '/v1/webhooks', { url: receiver.url }, 60_000);
    if (endpoint?.status !== 201) throw new Error(`webhook endpoint not made: ${JSON.stringify(endpoint)}`);
    return receiver;
  }));
  const funding: Funding = new Map();
  for (const member of group) {
    for (const currency of ['USD', 'EUR']) {
      const funded = await decide(baseUrl, member.key, '/v1/sandbox/faucet', { currency, amount: FUNDING }, 60_000);
      if (funded?.status !== 201 && funded?.status !== 200) throw new Error(`funding failed: ${JSON.stringify(funded)}`);
      credited(funding, member, currency, FUNDING);
    }
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
    ['partner and webhook dispatchers', async () => roles.workers.kill(), () => roles.workers.start()],
    ['api process', async () => roles.api.kill(), () => roles.api.start()],
  ];
  for (const [what, kill, bringBack] of kills) {
    await sleep(STEADY_S * 1000);
    const killedAt = Date.now();
    console.log(`chaos: SIGKILL ${what}`);
    await kill();
    await sleep(DOWN_S * 1000);
    await bringBack();
    recovery.push([what, await untilDecided(group, funding, killedAt)]);
    console.log(`chaos: ${what} back; first decision ${recovery.at(-1)![1]} ms after the kill`);
  }
  await sleep(STEADY_S * 1000);
  stop.now = true;
  await load;
  const results = await Promise.all(sent);
  const failures = await check(baseUrl, firstDay, names.databaseUrl, group, funding, results, streams, receivers);
  streams.forEach((s) => s.close());
  await Promise.all(receivers.map((r) => r.close()));

  const byKind = (kind: Sent['kind']) => results.filter((r) => r.kind === kind);
  console.log(`\nchaos ${SHORT ? 'short' : 'long'} run: ${results.length} requests sent at ${RATE_PER_S}/s over ${ACCOUNTS} accounts (${byKind('transfer').length} transfers, ${byKind('conversion').length} conversions, ${byKind('payment').length} payments)`);
  for (const [kind, list] of [['transfers', byKind('transfer')], ['conversions', byKind('conversion')], ['payments', byKind('payment')]] as const) {
    const byStatus = new Map<string, number>();
    for (const r of list) {
      const outcome = r.decision ? `${r.decision.status}${r.decision.body?.error ? ` ${r.decision.body.error}` : ''}` : 'undecided';
      byStatus.set(outcome, (byStatus.get(outcome) ?? 0) + 1);
    }
    console.log(`  ${kind}: ${[...byStatus].map(([s, n]) => `${s}×${n}`).join(' ')}; retries: ${list.reduce((t, r) => t + (r.decision?.attempts ?? 0) - 1, 0)}`);
  }
  for (const [what, ms] of recovery) console.log(`  ${what.padEnd(20)} recovered in ${(ms / 1000).toFixed(1)} s (kill to first decision, ${DOWN_S} s down)`);
  console.log(`  events seen on SSE: ${streams.reduce((t, s) => t + s.seqs.length, 0)} over ${streams.reduce((t, s) => t + s.connections, 0)} connections`);
  console.log(`  webhook requests received: ${receivers.reduce((t, r) => t + r.received.length, 0)} (one in ten answered 503, so retried)`);
  console.log(failures.length === 0 ? '  every check passed: nothing lost, nothing doubled' : `  FAILED:\n    ${failures.join('\n    ')}`);
  for (const role of Object.values(roles).reverse()) await role.stop();
  process.exit(failures.length === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error('chaos run failed:', error);
  for (const role of Object.values(roles)) role.kill(); // leave no process of the run behind
  process.exit(1);
});
