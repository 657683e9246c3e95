// A client's first hour, through a TypeScript client generated from /v1/openapi.json
// (openapi-typescript for the types, openapi-fetch for the typed calls).
//
// Run by test/integration/generated-client-ts.test.ts next to the generated ./schema, after
// `tsc` has checked it under --strict (tsconfig.json beside this file); argv[2] is the service's
// base URL. Each call's path, parameters and body are checked against the document at compile
// time, and each answer is read as the body the document declares for the status it came with:
// a status the document lacks, or a field it does not declare, fails the compile; an answer with
// another status fails the run.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './schema';

const baseUrl = process.argv[2];
const PASSWORD = 'correct horse battery staple';

type Responses<Operation extends keyof operations> = operations[Operation]['responses'];
type JsonBody<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never;
/** The body the document declares for one status of one operation. */
type Answer<Operation extends keyof operations, Status extends keyof Responses<Operation>> = JsonBody<Responses<Operation>[Status]>;
type ErrorBody = components['schemas']['Error'];

/** What every openapi-fetch call resolves to: the parsed body (as data or error) and the response. */
interface Outcome { data?: unknown; error?: unknown; response: Response }

/** The answer's body as the document's model for `status`; any other status fails the flow. */
function answered<Operation extends keyof operations, Status extends keyof Responses<Operation> & number>(
  operation: Operation, status: Status, outcome: Outcome,
): Answer<Operation, Status> {
  const body = outcome.response.ok ? outcome.data : outcome.error;
  assert.equal(outcome.response.status, status, `${operation}: expected ${status}, got ${outcome.response.status}: ${JSON.stringify(body)}`);
  return body as Answer<Operation, Status>;
}

/** A write that answers 202 while the ledger has not decided: repeated with the same key until it has. */
async function decided(send: () => Promise<Outcome>): Promise<Outcome> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const outcome = await send();
    if (outcome.response.status !== 202) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.fail('still 202 after 20 tries');
}

const anonymous = createClient<paths>({ baseUrl });
const withToken = (token: string) => createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
const keyed = () => ({ header: { 'Idempotency-Key': randomUUID() } });

async function signUp(label: string) {
  const email = `${label}-${randomUUID()}@example.com`;
  const created = answered('createSandboxAccount', 201, await anonymous.POST('/v1/sandbox/accounts', {
    body: { email, password: PASSWORD, business_name: `${label} Ltd`, country_code: 'GB' },
  }));
  assert.ok(created.api_key.key.startsWith('sk_sandbox_'), created.api_key.key);
  assert.ok(created.session.token, 'the sign-up returns a session token');
  return { email, account: created.account, key: created.api_key.key, vibans: created.vibans };
}

async function main(): Promise<void> {
  const alice = await signUp('alice');
  const bob = await signUp('bob');
  const api = withToken(alice.key);
  const session = answered('createSession', 201, await anonymous.POST('/v1/auth/sessions', { body: { email: alice.email, password: PASSWORD } }));
  const dashboard = withToken(session.token);
  const me = answered('getMyAccount', 200, await dashboard.GET('/v1/accounts/me'));
  assert.equal(me.id, alice.account.id);

  const faucet = keyed();
  const funded = answered('sandboxFaucet', 201, await decided(() => api.POST('/v1/sandbox/faucet', { params: faucet, body: { currency: 'USD', amount: '100.00' } })));
  assert.equal(funded.amount, '100.00');
  assert.equal(funded.balance.available, '100.00');

  const customer = { email: `c-${randomUUID()}@example.com`, business_name: 'Customer Co', country_code: 'DE' } as const;
  const newCustomer = answered('createCustomer', 201, await api.POST('/v1/customers', { params: keyed(), body: customer }));
  const sameCustomer = answered('createCustomer', 200, await api.POST('/v1/customers', { params: keyed(), body: customer }));
  assert.equal(sameCustomer.id, newCustomer.id);

  const contact = answered('createContact', 201, await api.POST('/v1/contacts', {
    params: keyed(),
    body: {
      name: 'Supplier', email: `s-${randomUUID()}@example.com`,
      bank: { country: 'DE', bank_name: 'Bank', account_number: 'DE89370400440532013000', currency: 'EUR' },
    },
  }));
  assert.equal(contact.name, 'Supplier');

  // A transfer, decided and read back.
  const transferKey = keyed();
  const transferBody = { amount: '12.34', currency: 'USD', recipient_email: bob.email } as const;
  const sent = answered('createTransfer', 201, await decided(() => api.POST('/v1/transfers', { params: transferKey, body: transferBody })));
  assert.equal(sent.amount, '12.34');
  const fetched = answered('getTransfer', 200, await api.GET('/v1/transfers/{id}', { params: { path: { id: sent.transfer_id } } }));
  assert.equal(fetched.status, 'completed');
  assert.equal(fetched.status_history.at(-1)?.to, 'completed');

  const balance = answered('getMyBalance', 200, await dashboard.GET('/v1/accounts/me/balance'));
  assert.equal(balance.totals.find((total) => total.currency === 'USD')?.available, '87.66');
  // The instant after the transfer: later movements must not show in the balance as it was then.
  const afterTransfer = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 50));

  // Errors through the shared error model: a body that fails validation (400, details naming the
  // field), and the transfer's key reused for another body (409).
  const invalid: ErrorBody = answered('createTransfer', 400, await api.POST('/v1/transfers', {
    params: keyed(), body: { ...transferBody, amount: '12.345' },
  }));
  assert.equal(invalid.error, 'invalid_request');
  assert.match(invalid.details ?? '', /amount/);
  const conflict: ErrorBody = answered('createTransfer', 409, await api.POST('/v1/transfers', {
    params: transferKey, body: { ...transferBody, amount: '1.00' },
  }));
  assert.equal(conflict.error, 'idempotency_conflict');

  // FX: a public price, a locked quote, its execution.
  const price = answered('createPublicFxQuote', 200, await anonymous.POST('/v1/fx/quotes', { body: { from_currency: 'USD', to_currency: 'EUR', from_amount: '10.00' } }));
  assert.ok(Number(price.rate) < Number(price.mid_rate), JSON.stringify(price));
  const quote = answered('createFxQuote', 201, await api.POST('/v1/fx/quote', { params: keyed(), body: { from_currency: 'USD', to_currency: 'EUR', from_amount: '10.00' } }));
  assert.equal(quote.status, 'created');
  const executeKey = keyed();
  const executed = answered('executeFxQuote', 201, await decided(() => api.POST('/v1/fx/execute', { params: executeKey, body: { quote_id: quote.id } })));
  assert.equal(executed.quote.status, 'consumed');
  assert.equal(executed.quote.to_amount, quote.to_amount);
  const consumed = answered('getFxQuote', 200, await api.GET('/v1/fx/quotes/{id}', { params: { path: { id: quote.id } } }));
  assert.equal(consumed.status, 'consumed');

  // Wallets: a pocket and money moved into it.
  const wallet = answered('createWallet', 201, await api.POST('/v1/wallets', { params: keyed(), body: { name: 'Savings' } }));
  assert.equal(wallet.status, 'open');
  const moveKey = keyed();
  const moved = answered('createWalletTransfer', 201, await decided(() => api.POST('/v1/wallet-transfers', {
    params: moveKey, body: { from_wallet_id: 'main', to_wallet_id: wallet.id, amount: '5.00', currency: 'USD' },
  })));
  assert.equal(moved.amount, '5.00');
  const pocket = answered('getWalletBalances', 200, await api.GET('/v1/wallets/{wallet_id}/balances', { params: { path: { wallet_id: wallet.id } } }));
  assert.deepEqual(pocket.balances.map(({ currency, available, held }) => [currency, available, held]), [['USD', '5.00', '0.00']]);

  // Holds: one captured in part and finally, one voided.
  const holdKey = keyed();
  const held = answered('createHold', 201, await decided(() => api.POST('/v1/holds', { params: holdKey, body: { amount: '3.00', currency: 'USD' } })));
  assert.equal(held.status, 'active');
  const captureKey = keyed();
  const captured = answered('captureHold', 200, await decided(() => api.POST('/v1/holds/{hold_id}/capture', {
    params: { ...captureKey, path: { hold_id: held.id } }, body: { amount: '1.00', recipient_email: bob.email, final: true },
  })));
  assert.equal(captured.status, 'captured');
  assert.equal(captured.released_amount, '2.00');
  const readBack = answered('getHold', 200, await api.GET('/v1/holds/{hold_id}', { params: { path: { hold_id: held.id } } }));
  assert.equal(readBack.captures[0]?.amount, '1.00');
  const toVoidKey = keyed();
  const toVoid = answered('createHold', 201, await decided(() => api.POST('/v1/holds', { params: toVoidKey, body: { amount: '2.00', currency: 'USD' } })));
  const voidKey = keyed();
  const voided = answered('voidHold', 200, await decided(() => api.POST('/v1/holds/{hold_id}/void', { params: { ...voidKey, path: { hold_id: toVoid.id } } })));
  assert.equal(voided.status, 'voided');
  assert.equal(voided.released_amount, '2.00');

  // A transfer batch: two transfers, all or none.
  const batchKey = keyed();
  const batch = answered('createTransferBatch', 201, await decided(() => api.POST('/v1/transfer-batches', {
    params: batchKey,
    body: { atomic: true, transfers: [{ recipient_email: bob.email, amount: '1.50', currency: 'USD', note: 'first' }, { recipient_email: bob.email, amount: '0.50', currency: 'USD' }] },
  })));
  assert.equal(batch.status, 'completed');
  assert.deepEqual(batch.items.map((item) => item.status), ['created', 'created']);
  const batchTransfer = batch.items[0]?.transfer_id;
  assert.ok(batchTransfer, JSON.stringify(batch));
  const firstOfBatch = answered('getTransfer', 200, await api.GET('/v1/transfers/{id}', { params: { path: { id: batchTransfer } } }));
  assert.equal(firstOfBatch.amount, '1.50');

  // The balance as it was right after the first transfer, whatever moved since.
  const then = answered('getMyBalance', 200, await dashboard.GET('/v1/accounts/me/balance', { params: { query: { at: afterTransfer } } }));
  assert.equal(then.totals.find((total) => total.currency === 'USD')?.available, '87.66');
  const now = answered('getMyBalance', 200, await dashboard.GET('/v1/accounts/me/balance'));
  // 87.66 less the FX 10.00, the 5.00 moved to the wallet (main's balance only), the capture 1.00
  // and the batch 2.00; the voided hold's 2.00 is back.
  assert.equal(now.totals.find((total) => total.currency === 'USD')?.available, '69.66');

  // A reversal of part of the batch's first transfer: 0.50 of 1.50 back from bob.
  const reverseKey = keyed();
  const reversal = answered('reverseTransfer', 201, await decided(() => api.POST('/v1/transfers/{id}/reversals', {
    params: { ...reverseKey, path: { id: batchTransfer } }, body: { amount: '0.50', reason: 'one item too many' },
  })));
  assert.deepEqual([reversal.amount, reversal.status, reversal.reason], ['0.50', 'completed', 'one item too many']);
  const reversals = answered('listTransferReversals', 200, await api.GET('/v1/transfers/{id}/reversals', { params: { path: { id: batchTransfer } } }));
  assert.deepEqual(reversals.data.map((r) => r.id), [reversal.id]);
  assert.equal(answered('getTransfer', 200, await api.GET('/v1/transfers/{id}', { params: { path: { id: batchTransfer } } })).reversed_amount, '0.50');

  // Metadata: set with a transfer, found again by the list filter (metadata[order_id]=..., the
  // document's deepObject, as the client serializes an object in a query), changed with PATCH.
  const order = `A-${randomUUID()}`;
  const taggedKey = keyed();
  const tagged = answered('createTransfer', 201, await decided(() => api.POST('/v1/transfers', {
    params: taggedKey, body: { ...transferBody, amount: '0.10', metadata: { order_id: order, channel: 'web' } },
  })));
  const found = answered('listTransfers', 200, await api.GET('/v1/transfers', { params: { query: { metadata: { order_id: order }, currency: 'USD' } } }));
  assert.deepEqual(found.data.map((t) => [t.transfer_id, t.metadata.channel]), [[tagged.transfer_id, 'web']]);
  const changeKey = keyed();
  const changed = answered('updateTransfer', 200, await decided(() => api.PATCH('/v1/transfers/{id}', {
    params: { ...changeKey, path: { id: tagged.transfer_id } }, body: { metadata: { channel: null, note: 'a gift' } },
  })));
  assert.deepEqual(changed.metadata, { order_id: order, note: 'a gift' });

  // A vIBAN's details are a transfer's bank details as they are: the types agree without a cast.
  const mine = answered('listMyVibans', 200, await dashboard.GET('/v1/accounts/me/vibans'));
  assert.deepEqual(mine.data.map((viban) => viban.bank_country).filter((country) => country.length !== 2), []);
  const usd = bob.vibans.find((viban) => viban.currency === 'USD');
  assert.ok(usd, JSON.stringify(bob.vibans));
  const toBob = keyed();
  const bankTransfer = answered('createTransfer', 201, await decided(() => api.POST('/v1/transfers', {
    params: toBob,
    body: { amount: '1.00', currency: 'USD', recipient: { email: bob.email, name: 'Bob', bank: { country: usd.bank_country, bank_name: usd.bank_name, account_number: usd.account_number, currency: 'USD' } } },
  })));
  assert.equal(bankTransfer.payout.currency, 'USD');

  const alert = answered('createBalanceAlert', 201, await api.POST('/v1/balance-alerts', { params: keyed(), body: { currency: 'USD', below: '10.00' } }));
  assert.equal(alert.below, '10.00');
  assert.equal(alert.above, null);
  assert.equal(alert.wallet_id, 'main');

  const logs = answered('listRequestLogs', 200, await dashboard.GET('/v1/request-logs', { params: { query: { path_prefix: '/v1/transfers', limit: 10 } } }));
  assert.ok(logs.data.some((log) => log.method === 'POST' && log.status === 201), JSON.stringify(logs.data.map((log) => [log.method, log.path, log.status])));

  console.log('generated TypeScript client: every call answered through its typed model');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
