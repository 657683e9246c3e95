// PartnerClient (src/partners/client.ts) against a real mock rails server: token caching and
// renewal (SPEC.md section 5, Partner-side OAuth 2.0), bounded retries, typed errors. Round
// trips are counted by the rail itself (GET /<slug>/_control/stats), as deltas around each act.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ownRailsBooks } from '../support/service';
import { startMockRails, type MockRails } from '../../src/mock-rails/server';
import { PartnerClient, type PartnerClientOptions } from '../../src/partners/client';
import { PartnerError } from '../../src/partners/errors';
import type { SandboxScenario } from '../../src/partners/scenarios';
import { call, eventually } from '../support/http';
import { uniqueReference } from '../support/partner-links';
import { controlHeaders, controlSecret } from '../support/secrets';

const CLIENT_ID = 'client_partner_client_test';
const CLIENT_SECRET = 'secret_partner_client_test';

interface RailStats {
  token_requests: number;
  submit_attempts: number;
  rejected_tokens: number;
}

/** A PartnerError with these fields; for assert.rejects. */
function partnerError(expected: Partial<Pick<PartnerError, 'kind' | 'httpStatus' | 'partnerCode' | 'retriable'>>): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof PartnerError, `expected a PartnerError, got ${String(error)}`);
    for (const [field, value] of Object.entries(expected)) {
      assert.equal(error[field as keyof PartnerError], value, `${field} of "${error.message}"`);
    }
    return true;
  };
}

async function listenOnFreePort(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

describe('PartnerClient against the mock rails', () => {
  let rails: MockRails;

  function client(slug: string, overrides: Partial<PartnerClientOptions> = {}): PartnerClient {
    return new PartnerClient({ baseUrl: `${rails.url}/${slug}`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, ...overrides });
  }

  async function stats(slug: string): Promise<RailStats> {
    const response = await call<RailStats>(`${rails.url}/${slug}`, 'GET', '/_control/stats', undefined, { headers: controlHeaders() });
    assert.equal(response.status, 200);
    return response.body;
  }

  /** How much each counter of `slug` moved while `act` ran. */
  async function countDuring(slug: string, act: () => Promise<unknown>): Promise<RailStats> {
    const before = await stats(slug);
    await act();
    const after = await stats(slug);
    return {
      token_requests: after.token_requests - before.token_requests,
      submit_attempts: after.submit_attempts - before.submit_attempts,
      rejected_tokens: after.rejected_tokens - before.rejected_tokens,
    };
  }

  before(async () => {
    rails = await startMockRails({
      ...ownRailsBooks(), host: '127.0.0.1', port: 0, tokenTtlSeconds: 60, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, controlSecret: controlSecret(),
      redirectUris: ['https://app.example.test/oauth/callback'], chainConfirmMs: 100,
    });
  });
  after(async () => {
    await rails.stop();
  });

  describe('tokens', () => {
    it('requests one token and reuses it for later calls', async () => {
      const fiat = client('fiat');
      const counted = await countDuring('fiat', async () => {
        for (let i = 0; i < 3; i += 1) {
          const payment = await fiat.submitPayment({ reference: uniqueReference(), amount: '10.00', currency: 'USD' });
          assert.equal(payment.status, 'completed');
        }
      });
      assert.deepEqual(counted, { token_requests: 1, submit_attempts: 3, rejected_tokens: 0 });
    });

    // A fault of the rail's token handling, then one payment: what the client asked of the rail.
    // A refused call is no submit attempt (the rail counts authenticated submits); a renewal is
    // one token request (the refresh grant).
    const faults: Array<[behaviour: string, control: string, amount: string, currency: string, expected: RailStats]> = [
      ['renews the token after a 401 and retries the call once', '/_control/expire-tokens', '11.00', 'GBP', { token_requests: 1, submit_attempts: 1, rejected_tokens: 1 }],
      ['answers a spurious "Invalid token" by retrying the call with the same token, without renewing', '/_control/invalid-token?count=1', '12.00', 'USD', { token_requests: 0, submit_attempts: 1, rejected_tokens: 1 }],
      ['renews when "Invalid token" comes back on the retried call too', '/_control/invalid-token?count=2', '13.00', 'USD', { token_requests: 1, submit_attempts: 1, rejected_tokens: 2 }],
    ];
    for (const [behaviour, control, amount, currency, expected] of faults) {
      it(behaviour, async () => {
        const fiat = client('fiat');
        await fiat.submitPayment({ reference: uniqueReference(), amount: '10.00', currency: 'USD' });
        assert.equal((await call(`${rails.url}/fiat`, 'POST', control, undefined, { headers: controlHeaders() })).status, 200);
        const counted = await countDuring('fiat', async () => {
          const payment = await fiat.submitPayment({ reference: uniqueReference(), amount, currency });
          assert.equal(payment.status, 'completed');
        });
        assert.deepEqual(counted, expected);
      });
    }

    it('shares one token request among 20 concurrent calls on an empty cache', async () => {
      const chain = client('chain');
      const counted = await countDuring('chain', async () => {
        const payments = await Promise.all(Array.from({ length: 20 }, () => chain.submitPayment({ reference: uniqueReference(), amount: '3.000001', currency: 'USDC' })));
        assert.equal(new Set(payments.map((payment) => payment.id)).size, 20);
      });
      assert.deepEqual(counted, { token_requests: 1, submit_attempts: 20, rejected_tokens: 0 });
    });

    it('raises rejected 401 invalid_client for wrong credentials, without retrying', async () => {
      const fiat = client('fiat', { clientSecret: 'wrong' });
      const counted = await countDuring('fiat', () => assert.rejects(
        fiat.submitPayment({ reference: uniqueReference(), amount: '10.00', currency: 'USD' }),
        partnerError({ kind: 'rejected', httpStatus: 401, partnerCode: 'invalid_client', retriable: false }),
      ));
      assert.deepEqual(counted, { token_requests: 1, submit_attempts: 0, rejected_tokens: 0 });
    });
  });

  describe('payments', () => {
    it('follows a chain payment from pending to completed with getPayment', async () => {
      const chain = client('chain');
      const submitted = await chain.submitPayment({ reference: uniqueReference(), amount: '5.00', currency: 'EURC' });
      assert.equal(submitted.status, 'pending');
      assert.match(submitted.tx_hash ?? '', /^0x[0-9a-f]{64}$/);
      const completed = await eventually(async () => {
        const payment = await chain.getPayment(submitted.id);
        return payment.status === 'completed' ? payment : undefined;
      }, 5_000, 'the chain payment to complete');
      assert.equal(completed.id, submitted.id);
    });

    it('returns the same payment when the same reference is submitted again', async () => {
      const claimless = client('claimless');
      const request = { reference: uniqueReference(), amount: '8.00', currency: 'EUR', beneficiary: { email: 'payee@example.test' } };
      const first = await claimless.submitPayment(request);
      const again = await claimless.submitPayment(request);
      assert.deepEqual(again, first);
      assert.ok(first.claim_link?.endsWith(`/claimless/claim/${first.id}`));
    });

    it('raises rejected 404 for an unknown payment id', async () => {
      await assert.rejects(
        client('fiat').getPayment('fiat_ffffffffffffffffffffffff'),
        partnerError({ kind: 'rejected', httpStatus: 404, partnerCode: 'not_found' }),
      );
    });

    it('raises rejected 400 unsupported_currency, without retrying', async () => {
      const fiat = client('fiat');
      const counted = await countDuring('fiat', () => assert.rejects(
        fiat.submitPayment({ reference: uniqueReference(), amount: '10.00', currency: 'USDC' }),
        partnerError({ kind: 'rejected', httpStatus: 400, partnerCode: 'unsupported_currency', retriable: false }),
      ));
      assert.equal(counted.submit_attempts, 1);
    });
  });

  describe('sandbox scenarios, asked for by name', () => {
    it('rides out an outage: the rail sees 3 submit attempts, the caller a payment', async () => {
      const openbank = client('openbank');
      const counted = await countDuring('openbank', async () => {
        const payment = await openbank.submitPayment({ reference: uniqueReference(), amount: '10.00', currency: 'USD', scenario: 'outage' });
        assert.equal(payment.status, 'authorized');
      });
      assert.deepEqual(counted, { token_requests: 1, submit_attempts: 3, rejected_tokens: 0 });
    });

    // A scenario the rail always refuses: the error the client raises, and how often it asked.
    const refusals: Array<[behaviour: string, options: Partial<PartnerClientOptions>, scenario: SandboxScenario, currency: string, expected: Parameters<typeof partnerError>[0], attempts: number]> = [
      ['gives up on an outage after attemptsMax attempts: unavailable, retriable', { attemptsMax: 2 }, 'outage', 'USD', { kind: 'unavailable', httpStatus: 503, partnerCode: 'temporarily_unavailable', retriable: true }, 2],
      ['raises declined for a hard decline, after one attempt', {}, 'decline', 'EUR', { kind: 'declined', httpStatus: 422, partnerCode: 'declined', retriable: false }, 1],
      ['raises unexpected for a partner error, after one attempt', {}, 'error', 'USD', { kind: 'unexpected', httpStatus: 500, partnerCode: 'internal', retriable: false }, 1],
    ];
    for (const [behaviour, options, scenario, currency, expected, attempts] of refusals) {
      it(behaviour, async () => {
        const fiat = client('fiat', options);
        const counted = await countDuring('fiat', () => assert.rejects(
          fiat.submitPayment({ reference: uniqueReference(), amount: '10.00', currency, scenario }),
          partnerError(expected),
        ));
        assert.equal(counted.submit_attempts, attempts);
      });
    }

    it('reports a reversal through getPayment', async () => {
      const fiat = client('fiat');
      const submitted = await fiat.submitPayment({ reference: uniqueReference(), amount: '10.00', currency: 'USD', scenario: 'reverse' });
      assert.equal(submitted.status, 'pending');
      await eventually(async () => ((await fiat.getPayment(submitted.id)).status === 'reversed' ? true : undefined), 5_000, 'the reversal');
    });
  });
});

describe('PartnerClient with short-lived tokens', () => {
  let rails: MockRails;

  before(async () => {
    rails = await startMockRails({
      ...ownRailsBooks(), host: '127.0.0.1', port: 0, tokenTtlSeconds: 1, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, controlSecret: controlSecret(),
      redirectUris: [], chainConfirmMs: 100,
    });
  });
  after(async () => {
    await rails.stop();
  });

  it('renews shortly before expires_in elapses, so the partner never refuses a token', async () => {
    const fiat = new PartnerClient({ baseUrl: `${rails.url}/fiat`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    const stats = async () => (await call<RailStats>(`${rails.url}/fiat`, 'GET', '/_control/stats', undefined, { headers: controlHeaders() })).body;
    // Keep calling across the 1 s lifetime until the client has renewed at least twice.
    await eventually(async () => {
      await fiat.submitPayment({ reference: uniqueReference(), amount: '1.00', currency: 'USD' });
      return (await stats()).token_requests >= 3 ? true : undefined;
    }, 5_000, 'two proactive renewals');
    assert.equal((await stats()).rejected_tokens, 0);
  });
});

describe('PartnerClient when the partner cannot be reached', () => {
  let silent: Server;
  let silentPort: number;
  let closedPort: number;
  let requestsSeen = 0;

  before(async () => {
    // A partner that accepts connections and never answers: every exchange times out.
    silent = createServer(() => {
      requestsSeen += 1;
    });
    silentPort = await listenOnFreePort(silent);
    // A port nobody listens on any more: every exchange fails to connect.
    const gone = createServer();
    closedPort = await listenOnFreePort(gone);
    await closeServer(gone);
  });
  after(async () => {
    await closeServer(silent);
  });

  it('raises unavailable after attemptsMax timeouts', async () => {
    const partner = new PartnerClient({
      baseUrl: `http://127.0.0.1:${silentPort}/fiat`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET,
      timeoutMs: 100, attemptsMax: 3, backoffMsInitial: 1, backoffMsMax: 5,
    });
    await assert.rejects(
      partner.submitPayment({ reference: uniqueReference(), amount: '1.00', currency: 'USD' }),
      partnerError({ kind: 'unavailable', httpStatus: null, retriable: true }),
    );
    assert.equal(requestsSeen, 3, 'one token request per attempt, none answered');
  });

  it('raises unavailable after attemptsMax connection failures', async () => {
    const partner = new PartnerClient({
      baseUrl: `http://127.0.0.1:${closedPort}/fiat`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET,
      attemptsMax: 2, backoffMsInitial: 1, backoffMsMax: 5,
    });
    await assert.rejects(
      partner.getPayment('fiat_ffffffffffffffffffffffff'),
      partnerError({ kind: 'unavailable', httpStatus: null, partnerCode: null, retriable: true }),
    );
  });
});
