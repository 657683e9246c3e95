// The OpenAPI document is as strict as the validation: a client that builds each request from the
// document alone (its enums, examples, formats, bounds, and the shapes an object may take) is not
// refused for a bad request. One request per operation, with a credential the operation accepts.
// Each answer is one the document declares for the operation, never a server error, never a
// refusal of that credential; ids name nothing, so a 404 is a fair answer, a 400 is not; and a
// request that names nothing missing succeeds.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { firstValid, type Schema } from '../support/fuzz/values';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

interface Parameter { name: string; in: string; required?: boolean; schema: Schema }

/**
 * Operations without path parameters whose request, built from the document alone, names
 * something that does not exist or asks more than a new account holds: any declared answer that
 * is not a server error or a refusal of the credential is fair. Every other operation without path
 * parameters asks for nothing missing, and must succeed.
 */
const UNFULFILLABLE: Record<string, string> = {
  'POST /v1/auth/sessions': 'the example email and password are no one\'s',
  'GET /v1/partner-links/callback': 'the state names no link request',
  'POST /v1/transfers': 'the recipient_email is no account\'s',
  'POST /v1/fx/execute': 'the quote_id names no quote',
  'POST /v1/payments/add-funds': 'the customer_id names no customer',
  'POST /v1/payments/send': 'the customer_id names no customer',
  'POST /v1/wallet-transfers': 'the wallet ids name no wallet',
  'POST /v1/holds': 'the example amount is more than the faucet\'s example credit',
};

/** What is wrong with `status` as the answer to a request built from the document alone; null: nothing. */
function wrongAnswer(status: number, declared: string[], credentialSent: boolean, mustSucceed: boolean): string | null {
  if (status === 400) return 'a bad request, though the document allows it';
  if (!declared.includes(String(status))) return `not declared (${declared.join(', ')})`;
  if (status >= 500) return 'a server error';
  if (credentialSent && (status === 401 || status === 403)) return 'a refusal of a credential the operation accepts';
  if (mustSucceed && (status < 200 || status >= 300)) return 'no success, though the request names nothing missing';
  return null;
}

describe('the OpenAPI document describes requests as strictly as the validation', function () {
  this.timeout(120_000);
  const base = () => testService().baseUrl;

  it('answers each request built from the document alone as the document declares: no bad request, server error or refused credential', async () => {
    const document = await (await fetch(`${base()}/v1/openapi.json`)).json() as { paths: Record<string, Record<string, any>> };
    const owner = await signUp(base());
    const credentialFor = (security: Array<Record<string, string[]>> | undefined): string | null => {
      const schemes = (security ?? []).flatMap((requirement) => Object.keys(requirement));
      if (schemes.length === 0) return null;
      if (schemes.includes('apiKey')) return owner.key;
      if (schemes.includes('sessionToken')) return owner.token;
      return testService().config.masterKey;
    };
    const wrong: string[] = [];
    const sent = new Set<string>();
    const operations = Object.entries<Record<string, any>>(document.paths).flatMap(([template, item]) => Object.entries<any>(item).map(([method, operation]) => ({ template, method, operation })));
    // Signing out last: the session it ends is the credential of other operations.
    const signsOut = ({ template, method }: { template: string; method: string }) => Number(method === 'delete' && template === '/v1/auth/sessions/current');
    operations.sort((a, b) => signsOut(a) - signsOut(b));
    for (const { template, method, operation } of operations) {
      const parameters: Parameter[] = operation.parameters ?? [];
      const where = `${method.toUpperCase()} ${template}`;
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(firstValid(parameters.find((p) => p.in === 'path' && p.name === name)?.schema ?? {}, `${where} ${name}`))));
      const query = new URLSearchParams();
      for (const parameter of parameters.filter((p) => p.in === 'query' && p.required)) query.set(parameter.name, String(firstValid(parameter.schema, `${where} ?${parameter.name}`)));
      const headers: Record<string, string> = {};
      const token = credentialFor(operation.security);
      if (token) headers.authorization = `Bearer ${token}`;
      if (parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')) headers['idempotency-key'] = randomUUID();
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
      if (bodySchema) headers['content-type'] = 'application/json';
      const aborter = new AbortController();
      const response = await fetch(`${base()}${path}${query.size > 0 ? `?${query}` : ''}`, {
        method: method.toUpperCase(), headers, signal: aborter.signal, body: bodySchema ? JSON.stringify(firstValid(bodySchema, `${where} body`)) : undefined,
      });
      sent.add(where);
      // An event stream answers at once and stays open: its status is the answer.
      const text = response.headers.get('content-type')?.startsWith('text/event-stream') ? '' : await response.text();
      aborter.abort();
      const mustSucceed = !template.includes('{') && !(where in UNFULFILLABLE);
      const problem = wrongAnswer(response.status, Object.keys(operation.responses), token !== null, mustSucceed);
      if (problem) wrong.push(`${where}: ${response.status}, ${problem}: ${text.slice(0, 300)}`);
    }
    assert.ok(sent.size >= 60, `every operation of the document (${sent.size} sent)`);
    assert.deepEqual(Object.keys(UNFULFILLABLE).filter((where) => !sent.has(where)), [], 'each unfulfillable operation is in the document');
    assert.deepEqual(wrong, []);
  });

  it('lets the master key name the account it acts for on every write that acts for an account', async () => {
    const document = await (await fetch(`${base()}/v1/openapi.json`)).json() as { paths: Record<string, Record<string, any>> };
    const owner = await signUp(base());
    const wrong: string[] = [];
    let checked = 0;
    for (const [template, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        const schemes = (operation.security ?? []).flatMap((requirement: Record<string, string[]>) => Object.keys(requirement));
        // Writes that act for an account (not on a resource named in the path, which says whose it is), any credential.
        if (method === 'get' || template.includes('{') || !schemes.includes('masterKey') || schemes.length === 1) continue;
        checked++;
        const where = `${method.toUpperCase()} ${template}`;
        const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
        if (!bodySchema?.properties?.account_id) {
          wrong.push(`${where}: the document gives the master key no account_id`);
          continue;
        }
        const body = { ...(firstValid(bodySchema, `${where} body`) as Record<string, unknown>), account_id: owner.account.id };
        const response = await fetch(`${base()}${template}`, {
          method: method.toUpperCase(), body: JSON.stringify(body),
          headers: { authorization: `Bearer ${testService().config.masterKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        });
        const problem = wrongAnswer(response.status, Object.keys(operation.responses), true, !(where in UNFULFILLABLE));
        if (problem) wrong.push(`${where}: ${response.status}, ${problem}: ${(await response.text()).slice(0, 300)}`);
      }
    }
    assert.ok(checked >= 10, `${checked} operations checked`);
    assert.deepEqual(wrong, []);
  });
});

describe('the OpenAPI document states the rules across fields that the validation enforces', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;
  type Operation = { requestBody: { content: { 'application/json': { schema: Record<string, unknown> } } } };

  /** Whether the document's own body schema of `method path` accepts `body`, by a stock validator. */
  async function documentAccepts(method: string, path: string, body: unknown): Promise<boolean> {
    const document = await (await fetch(`${base()}/v1/openapi.json`)).json() as { paths: Record<string, Record<string, Operation>> };
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    return ajv.validate(document.paths[path][method].requestBody.content['application/json'].schema, body);
  }

  const payee = (country: string) => ({ email: 'payee@example.com', first_name: 'Ada', last_name: 'Lovelace', country_code: country, kind: 'personal' });
  const cases: Array<[string, string, string, Record<string, unknown>, number, string, string]> = [
    ['a transfer with both recipient forms', 'post', '/v1/transfers',
      { recipient_email: 'a@example.com', recipient: { email: 'b@example.com', name: 'B', bank: { country: 'DE', bank_name: 'Bank', account_number: 'DE0012341234', currency: 'EUR' } }, amount: '1.00', currency: 'USD' },
      400, 'invalid_request', 'recipient'],
    ['a transfer with neither recipient form', 'post', '/v1/transfers', { amount: '1.00', currency: 'USD' }, 400, 'invalid_request', 'recipient_email'],
    ['three decimals of USD', 'post', '/v1/transfers', { recipient_email: 'a@example.com', amount: '1.001', currency: 'USD' }, 400, 'invalid_request', 'amount'],
    ['three decimals of GBP from the faucet', 'post', '/v1/sandbox/faucet', { amount: '1.001', currency: 'GBP' }, 400, 'invalid_request', 'amount'],
    ['three decimals of EUR to quote', 'post', '/v1/fx/quotes', { from_currency: 'EUR', to_currency: 'USD', from_amount: '1.001' }, 400, 'invalid_request', 'from_amount'],
    ['a fiat currency on chain', 'post', '/v1/payments/send', { customer_id: randomUUID(), partner: 'chain', amount: '1.00', currency: 'USD', purpose: 'p', payee: payee('DE') }, 400, 'invalid_currency', 'currency'],
    ['a country code that is none, on claimless: the field\'s own rule first', 'post', '/v1/payments/send', { customer_id: randomUUID(), partner: 'claimless', amount: '1.00', currency: 'EUR', purpose: 'p', payee: payee('AAA') }, 400, 'invalid_country_code', 'payee.country_code'],
    ['a business payee without its business', 'post', '/v1/payments/send', { customer_id: randomUUID(), partner: 'claimless', amount: '1.00', currency: 'EUR', purpose: 'p', payee: { ...payee('DE'), kind: 'business' } }, 400, 'invalid_request', 'payee.business'],
    ['a phone number without its prefix', 'post', '/v1/payments/send', { customer_id: randomUUID(), partner: 'claimless', amount: '1.00', currency: 'EUR', purpose: 'p', payee: { ...payee('DE'), phone_number: '7700 900123' } }, 400, 'invalid_request', 'payee.phone_country_code'],
    ['a fiat payout without a bank account', 'post', '/v1/payments/send', { customer_id: randomUUID(), partner: 'fiat', amount: '1.00', currency: 'EUR', purpose: 'p', payee: payee('DE') }, 400, 'invalid_request', 'payee.bank'],
    ['a conversion of a currency into itself', 'post', '/v1/fx/quote', { from_currency: 'EUR', to_currency: 'EUR', from_amount: '1.00' }, 400, 'unsupported_pair', 'to_currency'],
    ['a conversion of a stablecoin', 'post', '/v1/fx/quotes', { from_currency: 'USDC', to_currency: 'USD', from_amount: '1.00' }, 400, 'unsupported_pair', 'to_currency'],
    ['a payout of USD into a USDC bank account', 'post', '/v1/transfers',
      { recipient: { email: 'b@example.com', name: 'B', bank: { country: 'DE', bank_name: 'Bank', account_number: 'DE0012341234', currency: 'USDC' } }, amount: '1.00', currency: 'USD' },
      400, 'unsupported_pair', 'recipient.bank.currency'],
    ['a payee bank account in another currency than the payment\'s', 'post', '/v1/payments/send',
      { customer_id: randomUUID(), partner: 'fiat', amount: '1.00', currency: 'EUR', purpose: 'p', payee: { ...payee('DE'), bank: { bank_name: 'Bank', bank_account_number: 'DE0012341234', iso_country_code: 'DE', currency_code: 'USD' } } },
      400, 'invalid_currency', 'payee.bank.currency_code'],
    ['a country claimless does not pay out to', 'post', '/v1/payments/send', { customer_id: randomUUID(), partner: 'claimless', amount: '1.00', currency: 'EUR', purpose: 'p', payee: payee('ZW') }, 503, 'corridor_unavailable', 'payee.country_code'],
  ];

  for (const [name, method, path, body, status, code, field] of cases) {
    it(`refuses ${name} in the document and in the answer alike`, async () => {
      assert.equal(await documentAccepts(method, path, body), false, 'the document refuses it');
      const owner = await signUp(base());
      const response = await fetch(`${base()}${path}`, {
        method: method.toUpperCase(), body: JSON.stringify(body),
        headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      });
      const answer = await response.json() as { error: string; details: string };
      assert.deepEqual([response.status, answer.error, answer.details], [status, code, field], JSON.stringify(answer));
    });
  }

  it('accepts in the document the same bodies with the rule kept', async () => {
    assert.equal(await documentAccepts('post', '/v1/transfers', { recipient_email: 'a@example.com', amount: '1.00', currency: 'USD' }), true);
    assert.equal(await documentAccepts('post', '/v1/transfers', { recipient_email: 'a@example.com', amount: '1.000001', currency: 'USDC' }), true);
    assert.equal(await documentAccepts('post', '/v1/fx/quote', { from_currency: 'GBP', to_currency: 'EUR', from_amount: '1.00', account_id: randomUUID() }), true);
    assert.equal(await documentAccepts('post', '/v1/transfers', {
      recipient: { email: 'b@example.com', name: 'B', bank: { country: 'DE', bank_name: 'Bank', account_number: 'DE0012341234', currency: 'EUR' } }, amount: '1.00', currency: 'USD',
    }), true);
    assert.equal(await documentAccepts('post', '/v1/payments/send', { customer_id: randomUUID(), partner: 'claimless', amount: '1.00', currency: 'EUR', purpose: 'p', payee: payee('DE') }), true);
  });
});
