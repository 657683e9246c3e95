// The fuzzer (issue: reliability): requests generated from /v1/openapi.json alone, for every
// operation, valid and bent (missing fields, wrong types, hostile strings and numbers, huge and
// deeply nested bodies, malformed JSON, wrong content types, bad ids and parameters), with every
// kind of credential. It fails on any 5xx but the one SPEC.md gives to input
// (corridor_unavailable), on any response the document does not declare, on any request whose
// log is missing afterwards, and on a ledger invariant broken by what it sent. Its account holds
// funds, persisted FX quotes and a customer linked with openbank, so valid requests really move
// money (`known` ids stand in for random ones). Each seed (test/support/seeds.ts: a fixed one and,
// in the system suite, a fresh one) sends FUZZ_REQUESTS requests, every operation first, then
// operations drawn at random; a failure names its seed, so `TEST_SEED=<seed> npm test -- dist/test/integration/fuzz.test.js`
// replays it.
import assert from 'node:assert/strict';
import { testService } from '../hooks';
import { createCustomer, createKey, signUp, type SignedUp } from '../support/accounts';
import { checkResponse } from '../support/contract';
import { fuzzRequest, operationsOf, type Credentials, type KnownValues, type Operation } from '../support/fuzz/requests';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';
import { fund } from '../support/money';
import { linkCustomer } from '../support/partner-links';
import { prng } from '../support/prng';
import { replayOf, seededCases } from '../support/seeds';

const REQUESTS = Number.parseInt(process.env.FUZZ_REQUESTS ?? '750', 10);
const CONCURRENCY = 8;
/** A request the service leaves unanswered this long is a failure (a hang), not a slow answer. */
const REQUEST_TIMEOUT_MS = 10_000;
const UNLOGGED = new Set(['/healthz', '/readyz']);
/** 5xx codes SPEC.md section 7 gives to a request's own content: a payee country no partner serves is 503 corridor_unavailable. */
const INPUT_5XX = new Set(['corridor_unavailable']);

/** The credential an operation is meant for, from its security requirements. */
function rightCredential(operation: Operation, credentials: Credentials): string | null {
  if (operation.security.length === 0) return null;
  if (operation.security.includes('apiKey')) return credentials.secret;
  if (operation.security.includes('sessionToken')) return credentials.session;
  return credentials.master;
}

describe('fuzzing every operation of /v1/openapi.json', function () {
  this.timeout(30 * 60_000);

  let operations: Operation[];
  let owner: SignedUp;
  let credentials: Credentials;
  let known: KnownValues;
  /** One account for every seed: funded, with persisted FX quotes and a customer linked with openbank. */
  before(async function () {
    this.timeout(120_000);
    const { baseUrl, runtime } = testService();
    const document = await (await fetch(`${baseUrl}/v1/openapi.json`)).json();
    operations = operationsOf(document);
    owner = await signUp(baseUrl);
    const live = owner.key.replace('sk_sandbox_', 'sk_live_');
    credentials = {
      none: null, garbage: 'not-a-credential', secret: owner.key, live, session: owner.token, master: runtime.config.masterKey,
      publishable: (await createKey(baseUrl, owner.token, 'publishable')).key,
      restrictedAll: (await createKey(baseUrl, owner.token, 'restricted', ['transfers:write', 'transfers:read', 'transactions:read', 'customers:write', 'customers:read', 'contacts:write', 'contacts:read', 'request_logs:read', 'fx:write', 'fx:read', 'payments:write', 'payments:read'])).key,
      restrictedNone: (await createKey(baseUrl, owner.token, 'restricted', ['request_logs:read'])).key,
    };
    for (const currency of ['USD', 'EUR', 'GBP']) await fund(baseUrl, owner.key, currency, '100000.00');
    const quoteIds: string[] = [];
    for (let i = 0; i < 30; i++) {
      const [from, to] = [['USD', 'EUR'], ['EUR', 'GBP'], ['GBP', 'USD']][i % 3];
      const quote = await call(baseUrl, 'POST', '/v1/fx/quote', { from_currency: from, to_currency: to, from_amount: `${i + 1}.00` }, { token: owner.key, idempotencyKey: `fuzz-quote-${owner.account.id}-${i}` });
      quoteIds.push(quote.body.id);
    }
    // A customer linked with openbank, so valid add-funds requests reach the partner.
    const customerId: string = (await createCustomer(baseUrl, owner.key)).body.id;
    await linkCustomer(baseUrl, owner.key, customerId, 'openbank');
    known = {
      quote_id: quoteIds, '/v1/fx/quotes/{id}#id': quoteIds, '/v1/sandbox/fx/quotes/{id}/expire#id': quoteIds,
      customer_id: [customerId], '/v1/customers/{id}/partner-links#id': [customerId], '/v1/customers/{id}/funding-methods#id': [customerId],
      '/v1/customers/{id}#id': [customerId], partner: ['openbank', 'fiat', 'chain', 'claimless'],
    };
  });

  for (const { seed, tag } of seededCases([387_712])) it(`answers ${REQUESTS} generated requests, every operation among them, without a 5xx, within the document, each logged (${replayOf(seed)})${tag}`, async () => {
    const { baseUrl, runtime } = testService();
    const random = prng(seed);
    const tally = new Map<string, Map<number, number>>();
    const failures: string[] = [];
    const logged: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS && failures.length < 20) {
        next++;
        // Every operation once, then at random: each seed reaches all of them.
        const operation = next <= operations.length ? operations[next - 1] : operations[Math.floor(random() * operations.length)];
        const request = fuzzRequest(operation, random, { ...credentials, right: rightCredential(operation, credentials) }, known);
        let response: Response;
        let text: string;
        try {
          response = await fetch(`${baseUrl}${request.path}`, { method: request.method, headers: request.headers, body: request.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          // An event stream never ends by itself: its status and headers are the answer.
          if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
            await response.body?.cancel();
            text = '';
          } else {
            text = await response.text();
          }
        } catch (error) {
          failures.push(`${request.variant}: ${request.method} ${request.path.slice(0, 120)} ${JSON.stringify(request.headers)} body ${String(request.body).slice(0, 80)}: ${(error as Error).message}`);
          continue;
        }
        let body: unknown = text;
        try { body = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
        const route = `${operation.method} ${operation.path}`;
        const counts = tally.get(route) ?? new Map<number, number>();
        counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
        tally.set(route, counts);
        const what = `${request.variant}: ${request.method} ${request.path.slice(0, 120)} → ${response.status}`;
        const code = (body as { error?: string } | null)?.error;
        if (response.status >= 500 && !(code && INPUT_5XX.has(code))) failures.push(`${what} ${text.slice(0, 300)}`);
        try {
          await checkResponse(baseUrl, request.method, request.path, response.status, response.headers.get('content-type'), body);
        } catch (error) {
          failures.push(`${what}: ${(error as Error).message.slice(0, 400)}`);
        }
        // A sign-out ends the fuzz's session: the next requests get a new one, so dashboard routes stay reachable.
        if (request.path === '/v1/auth/sessions/current' && response.status === 200) {
          credentials.session = (await call(baseUrl, 'POST', '/v1/auth/sessions', { email: owner.email, password: owner.password })).body.token;
        }
        const requestId = response.headers.get('request-id');
        if (!requestId) failures.push(`${what}: no Request-Id`);
        else if (!UNLOGGED.has(request.path.split('?')[0])) logged.push(requestId);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    console.log(`      fuzz seed ${seed}: ${next} requests over ${tally.size} of ${operations.length} operations`);
    for (const [route, counts] of [...tally].sort(([a], [b]) => a.localeCompare(b))) {
      console.log(`        ${route.padEnd(52)} ${[...counts].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(' ')}`);
    }
    assert.deepEqual(failures, [], replayOf(seed));
    assert.equal(tally.size, operations.length, 'every operation was fuzzed');
    assert.deepEqual(await violations(runtime.db), {}, 'the ledger invariants hold after the fuzz');

    // Every request is logged (SPEC.md section 4), however hostile it was.
    const missing = await eventually(async () => {
      const stored = new Set<string>();
      for (let i = 0; i < logged.length; i += 1000) {
        const rows: Array<{ id: string }> = await runtime.db('request_logs').whereIn('id', logged.slice(i, i + 1000)).select('id');
        rows.forEach((row) => stored.add(row.id));
      }
      const absent = logged.filter((id) => !stored.has(id));
      return absent.length === 0 ? absent : undefined;
    }, 60_000, `the logs of ${logged.length} fuzzed requests`);
    assert.equal(missing.length, 0);
  });
});
