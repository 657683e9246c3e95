// A partner's statement lines as a reconciliation stages them (issue 49, item 7): every amount at
// its currency's scale ("97.4" staged "97.40", so a match recorded for it lasts), and a line with
// more decimals than its currency refused, naming the line, never rounded. The partner is a real
// HTTP server (its token endpoint and one statement page), the client the service's own.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError } from '../../src/domain-error';
import { PartnerClient } from '../../src/partners/client';
import type { StagedLine } from '../../src/reconciliation/run';
import { statementDays } from '../../src/reconciliation/partner-statements';

const DAY = '2026-03-02';

describe('a partner statement\'s amounts, as staged', () => {
  let server: Server;
  let lines: Array<Record<string, string>> = [];

  before(async () => {
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/oauth/token')) return void res.end(JSON.stringify({ access_token: 'token', token_type: 'Bearer', expires_in: 3600 }));
      if (req.url?.startsWith(`/v1/statements/${DAY}`)) return void res.end(JSON.stringify({ date: DAY, final: true, lines, next_cursor: null }));
      res.statusCode = 404;
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  const line = (id: string, currency: string, amount: string, fee = '0', net = amount) => ({ id, reference: `ref-${id}`, currency, amount, fee, net, value_date: DAY });
  const stage = async (): Promise<StagedLine[]> => {
    const client = new PartnerClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, clientId: 'id', clientSecret: 'secret', attemptsMax: 1 });
    const staged: StagedLine[] = [];
    for await (const page of statementDays(client, 'openbank', DAY, DAY)) staged.push(...page);
    return staged;
  };

  it('stages every amount at its currency\'s scale, however the partner wrote it', async () => {
    lines = [line('a', 'USD', '97.4'), line('b', 'USD', '100'), line('c', 'USDC', '1.5', '0.25', '1.25')];
    const staged = await stage();
    assert.deepEqual(staged.map((l) => [l.lineId, l.amount, l.fee, l.net]), [['a', '97.40', '0.00', '97.40'], ['b', '100.00', '0.00', '100.00'], ['c', '1.500000', '0.250000', '1.250000']]);
  });

  it('refuses a line with more decimals than its currency, naming it: nothing is rounded', async () => {
    lines = [line('fine', 'USD', '1.00'), line('sub-cent', 'USD', '10.005')];
    await assert.rejects(stage(), (error: unknown) => {
      assert.ok(error instanceof DomainError);
      assert.equal(error.code, 'partner_error');
      assert.match(error.message, /statement line sub-cent has an amount that is no decimal of at most the 2 decimals of USD/);
      return true;
    });
  });
});
