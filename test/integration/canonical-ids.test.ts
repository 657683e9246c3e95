// One form per identifier, decided at the edge (issue: trust in the ledger): an id is read in
// lower case whatever case it came in, so one account never splits in two and one request sent in
// two cases executes once; any other form (`urn:uuid:`, spaces, braces, unicode digits) is a 400
// naming the field that reaches neither Redis, Kafka nor SQL. The document says the same.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money } from '../../ledger/money';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { violations } from '../support/load';
import { balances, fund, transfer } from '../support/money';

/** Forms of a valid id that are not one: each must be refused, naming the field. */
const illegalForms = (id: string): string[] => [
  `urn:uuid:${id}`, `{${id}}`, ` ${id}`, `${id} `, id.replace(/-/g, ''), `${id}0`, id.slice(1),
  id.replace(/[0-9]/, '٣'), // an Arabic-Indic digit
  id.replace('-', '\u2010'), // a Unicode hyphen
];

describe('canonical ids', () => {
  const base = () => testService().baseUrl;
  const masterKey = () => testService().runtime.config.masterKey;
  afterEach(async () => assert.deepEqual(await violations(testService().runtime.db), {}, 'the ledger invariants hold'));

  it('executes an FX quote named in upper case, and refuses every other form of its id with 400 naming quote_id', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'EUR', '100.00');
    const quote = await call(base(), 'POST', '/v1/fx/quote', { from_currency: 'EUR', to_currency: 'GBP', from_amount: '10.00' }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(quote.status, 201, JSON.stringify(quote.body));
    for (const form of illegalForms(quote.body.id)) {
      const started = Date.now();
      const refused = await call(base(), 'POST', '/v1/fx/execute', { quote_id: form }, { token: owner.key, idempotencyKey: randomUUID() });
      expectError(refused, 400, 'invalid_request', 'quote_id', `quote_id ${JSON.stringify(form)}`);
      assert.ok(Date.now() - started < 2_000, 'refused at the edge, not after a round trip through the ledger');
    }
    const executed = await call(base(), 'POST', '/v1/fx/execute', { quote_id: quote.body.id.toUpperCase() }, { token: owner.key, idempotencyKey: randomUUID() });
    assert.equal(executed.status, 201, JSON.stringify(executed.body));
    assert.equal(executed.body.quote.id, quote.body.id, 'the quote named in upper case is the one executed');
    const after = await balances(base(), owner.token);
    assert.equal(after.EUR.available, '90.00', 'the conversion took the quoted amount once');
  });

  it('keeps one account whatever the case of the account_id the master key names: one balance, spendable, and one execution per request', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '100.00');
    const upper = owner.account.id.toUpperCase();
    const key = randomUUID();
    const first = await call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '50.00', account_id: upper }, { token: masterKey(), idempotencyKey: key });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.account_id, owner.account.id, 'the answer names the account in its one form');
    // The same request in the other case is the same request: a replay, not a second credit.
    const again = await call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '50.00', account_id: owner.account.id }, { token: masterKey(), idempotencyKey: key });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.id, first.body.id);
    const recipient = await signUp(base());
    const sent = await transfer(base(), owner.key, { amount: '149.00', currency: 'USD', recipient_email: recipient.email });
    assert.equal(sent.status, 201, `the whole balance is spendable: ${JSON.stringify(sent.body)}`);
    assert.equal(sent.body.status, 'completed');
    const after = await balances(base(), owner.token);
    assert.ok(new Money(after.USD.available).isEqualTo('1.00'), `one balance of 1.00 left, got ${JSON.stringify(after.USD)}`);
    const { rows } = await testService().runtime.db.raw(`SELECT count(*)::int AS n FROM ledger_accounts WHERE code ILIKE ?`, [`acct:${owner.account.id}:available:USD`]);
    assert.equal(rows[0].n, 1, 'one ledger account, in one case');
  });

  it('reads a resource named in upper case in the path and the query, and refuses other forms there too', async () => {
    const owner = await signUp(base());
    await fund(base(), owner.key, 'USD', '10.00');
    const recipient = await signUp(base());
    const sent = await transfer(base(), owner.key, { amount: '1.00', currency: 'USD', recipient_email: recipient.email });
    assert.equal(sent.status, 201);
    const id: string = sent.body.transfer_id;
    const read = await call(base(), 'GET', `/v1/transfers/${id.toUpperCase()}`, undefined, { token: owner.key });
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.transfer_id, id);
    expectError(await call(base(), 'GET', `/v1/transfers/urn:uuid:${id}`, undefined, { token: owner.key }), 400, 'invalid_request', 'id');
    const byMaster = await call(base(), 'GET', `/v1/accounts/me/vibans?account_id=${owner.account.id.toUpperCase()}`, undefined, { token: masterKey() });
    assert.equal(byMaster.status, 200, JSON.stringify(byMaster.body));
    expectError(await call(base(), 'GET', `/v1/accounts/me/vibans?account_id=urn:uuid:${owner.account.id}`, undefined, { token: masterKey() }), 400, 'invalid_request', 'account_id');
  });

  it('declares the one form in the document: every uuid field carries the pattern, which refuses urn: and takes either case', async () => {
    const document = (await call(base(), 'GET', '/v1/openapi.json')).body;
    const uuidSchemas: Array<{ pattern?: string }> = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (node === null || typeof node !== 'object') return;
      if ((node as { format?: unknown }).format === 'uuid') uuidSchemas.push(node as { pattern?: string });
      Object.values(node).forEach(walk);
    };
    walk(document);
    assert.ok(uuidSchemas.length > 50, 'the document has its ids');
    const id = randomUUID();
    for (const schema of uuidSchemas) {
      assert.ok(schema.pattern, 'a uuid field states its pattern');
      const pattern = new RegExp(schema.pattern!);
      assert.ok(pattern.test(id) && pattern.test(id.toUpperCase()));
      for (const form of illegalForms(id)) assert.ok(!pattern.test(form), `the pattern refuses ${JSON.stringify(form)}`);
    }
  });
});
