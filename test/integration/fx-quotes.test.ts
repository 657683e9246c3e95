// Public FX quotes (SPEC.md section 4, FX; DESIGN.md section 5b): no credential, nothing stored,
// the price shown with its mid-rate and spread, clear refusals, and a limit per client address.
import assert from 'node:assert/strict';
import { Money } from '../../ledger/money';
import { testService } from '../hooks';
import { expectError } from '../support/expect';
import { call } from '../support/http';
import { startService, type TestService } from '../support/service';

const quote = (baseUrl: string, body: unknown) => call(baseUrl, 'POST', '/v1/fx/quotes', body);

describe('public FX quotes', () => {
  const base = () => testService().baseUrl;

  it('prices a conversion without a credential: rate, mid-rate, spread, to_amount, expires_at 30 s on', async () => {
    const before = Date.now();
    const response = await quote(base(), { from_currency: 'USD', to_currency: 'EUR', from_amount: '250.5' });
    assert.equal(response.status, 200, JSON.stringify(response.body));
    const body = response.body;
    assert.deepEqual([body.from_currency, body.to_currency, body.from_amount], ['USD', 'EUR', '250.50']);
    assert.match(body.rate, /^0\.9\d{5}$/);
    assert.equal(body.spread, '0.0025');
    assert.ok(new Money(body.rate).isLessThan(body.mid_rate), 'the rate is the mid-rate less the spread');
    assert.equal(body.to_amount, new Money('250.50').times(body.rate).decimalPlaces(2, Money.ROUND_DOWN).toFixed(2));
    const expires = Date.parse(body.expires_at);
    assert.ok(expires >= before + 30_000 && expires <= Date.now() + 30_000, body.expires_at);
  });

  it('quotes every supported pair both ways, and a round trip gives back less', async () => {
    for (const [from, to] of [['USD', 'EUR'], ['USD', 'GBP'], ['EUR', 'GBP']]) {
      const there = await quote(base(), { from_currency: from, to_currency: to, from_amount: '100.00' });
      assert.equal(there.status, 200, `${from}/${to}`);
      const back = await quote(base(), { from_currency: to, to_currency: from, from_amount: there.body.to_amount });
      assert.equal(back.status, 200, `${to}/${from}`);
      assert.ok(new Money(back.body.to_amount).isLessThan('100.00'), `${from} → ${to} → ${from}: ${back.body.to_amount}`);
    }
  });

  it('refuses, naming the field, an unsupported pair, an unknown currency, a bad or too small amount', async () => {
    const cases: Array<[unknown, number, string, string]> = [
      [{ from_currency: 'USD', to_currency: 'USDC', from_amount: '10.00' }, 400, 'unsupported_pair', 'to_currency'],
      [{ from_currency: 'EUR', to_currency: 'EUR', from_amount: '10.00' }, 400, 'unsupported_pair', 'to_currency'],
      [{ from_currency: 'XXX', to_currency: 'EUR', from_amount: '10.00' }, 400, 'invalid_currency', 'from_currency'],
      [{ from_currency: 'USD', to_currency: 'eur', from_amount: '10.00' }, 400, 'invalid_currency', 'to_currency'],
      [{ from_currency: 'USD', to_currency: 'EUR', from_amount: '10.001' }, 400, 'invalid_request', 'from_amount'],
      [{ from_currency: 'USD', to_currency: 'EUR', from_amount: 10 }, 400, 'invalid_request', 'from_amount'],
      [{ from_currency: 'USD', to_currency: 'EUR', from_amount: '0' }, 400, 'invalid_request', 'from_amount'],
      [{ from_currency: 'USD', to_currency: 'EUR', from_amount: '0.01' }, 400, 'invalid_request', 'from_amount'],
      [{ from_currency: 'USD', to_currency: 'EUR' }, 400, 'invalid_request', 'from_amount'],
    ];
    for (const [body, status, code, field] of cases) {
      expectError(await quote(base(), body), status, code, field, JSON.stringify(body));
    }
  });

  describe('per client address', () => {
    let limited: TestService;
    before(async function () {
      this.timeout(60_000);
      limited = await startService({ ROLES: 'api', RATE_LIMIT_RPS: '2', RATE_LIMIT_BURST: '3', REDIS_KEY_PREFIX: `${testService().config.redisKeyPrefix}fx-limited:` });
    });
    after(async function () {
      this.timeout(30_000);
      await limited?.stop();
    });

    it('limits callers without a credential by their address: 429 with Retry-After past the burst', async () => {
      const body = { from_currency: 'GBP', to_currency: 'USD', from_amount: '1.00' };
      const responses = await Promise.all(Array.from({ length: 4 }, () => quote(limited.baseUrl, body)));
      assert.deepEqual(responses.map((r) => r.status).sort(), [200, 200, 200, 429]);
      const refused = responses.find((r) => r.status === 429)!;
      expectError(refused, 429, 'rate_limit_exceeded');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    });
  });
});
