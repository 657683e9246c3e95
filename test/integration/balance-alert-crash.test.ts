// A balance alert survives a ledger crash: the ledger runs as a process of its own, is killed
// (SIGKILL) as soon as the first round that crosses a threshold has committed, while the transfers
// that swing the balance are still in flight, and the ledger role comes back in the test's
// service. Every crossing the ledger's own sequence of postings makes is announced exactly once:
// in the account's events, and to a webhook endpoint subscribed to it (the round committed but
// perhaps not yet published is published by the outbox sweeper, and a round published twice is
// not delivered twice).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { restartLedger } from '../support/service';
import { Money, type Amount } from '../../ledger/money';
import { testService } from '../hooks';
import { signUp, type SignedUp } from '../support/accounts';
import { call, eventually, refuseServerError } from '../support/http';
import { fund } from '../support/money';
import { startReceiver } from '../support/webhook-receiver';

const base = () => testService().baseUrl;
const db = () => testService().runtime.db;

/** The ledger role alone, in a process of its own with the test's settings; resolves once it holds its partitions. */
async function ledgerProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'src', 'main.js')], {
    env: { ...process.env, ROLES: 'ledger', PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ledger process did not start: ${output.slice(-10).join('\n')}`)), 60_000);
    const keep = (chunk: Buffer) => {
      output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      if (output.some((line) => line.includes('"msg":"service started"'))) { clearTimeout(timer); resolve(); }
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the ledger process exited (${code}): ${output.slice(-10).join('\n')}`)); });
  });
  return child;
}

/**
 * A transfer sent as SPEC.md section 7 tells a client: the same key after a 202, until a final
 * answer. A ledger that is down leaves the decision late (202), never a 5xx: a 5xx fails the test.
 */
async function transferOnce(key: string, body: Record<string, unknown>): Promise<number> {
  const idempotencyKey = randomUUID();
  const deadline = Date.now() + 100_000;
  for (;;) {
    const response = await call(base(), 'POST', '/v1/transfers', body, { token: key, idempotencyKey });
    if (response.status === 400) throw new Error(`${JSON.stringify(body)} refused: ${JSON.stringify(response.body)}`);
    refuseServerError('POST', '/v1/transfers', response);
    if (response.status !== 202) return response.status;
    if (Date.now() > deadline) throw new Error(`no final answer: ${response.status} ${JSON.stringify(response.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** The account's available USD postings in ledger order, from `afterSeq` on. */
async function postingSequence(accountId: string, afterSeq: number): Promise<Array<{ id: string; seq: number; before: Amount; after: Amount }>> {
  const { rows } = await db().raw(
    `SELECT p.seq::int AS seq, p.id, p.amount::text AS amount, p.balance_after::text AS balance_after FROM postings p JOIN ledger_accounts la ON la.id = p.ledger_account_id
      WHERE la.account_id = ? AND la.kind = 'available' AND la.currency = 'USD' AND p.seq > ? ORDER BY p.seq`, [accountId, afterSeq]);
  return rows.map((r: any) => ({ id: r.id, seq: r.seq, before: new Money(r.balance_after).minus(r.amount), after: new Money(r.balance_after) }));
}

async function crossingEvents(accountId: string): Promise<Array<{ id: string; alert: string; posting: string }>> {
  const rows = await db()('account_events').where('account_id', accountId).whereRaw(`payload->>'type' = 'balance.threshold_crossed'`).orderBy('account_seq').select('id', 'payload');
  const attributes = (a: unknown) => (typeof a === 'string' ? JSON.parse(a) : a) as { posting_id: string };
  return rows.map((r) => ({ id: r.id, alert: r.payload.resource_id, posting: attributes(r.payload.data.attributes).posting_id }));
}

describe('a balance alert across a ledger crash @system', () => {
  it('announces every crossing exactly once when the ledger is killed after a crossing round and comes back', async function () {
    this.timeout(180_000);
    const service = testService();
    const index = service.roles.findIndex((r) => r.role === 'ledger');
    await service.roles[index].stop();
    let child: ChildProcess | null = null;
    let restarted = false;
    const receiver = await startReceiver();
    try {
      child = await ledgerProcess();
      const [carol, dave]: SignedUp[] = await Promise.all([signUp(base()), signUp(base())]);
      await Promise.all([fund(base(), carol.key, 'USD', '60.00'), fund(base(), dave.key, 'USD', '60.00')]);
      const endpoint = await call(base(), 'POST', '/v1/webhooks', { url: receiver.url, events: ['balance.threshold_crossed'] }, { token: carol.key, idempotencyKey: randomUUID() });
      assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
      const alerts = [{ direction: 'below', threshold: '50.00' }, { direction: 'above', threshold: '70.00' }];
      const ids: string[] = [];
      for (const a of alerts) {
        const made = await call(base(), 'POST', '/v1/balance-alerts', { currency: 'USD', [a.direction]: a.threshold }, { token: carol.key, idempotencyKey: randomUUID() });
        assert.equal(made.status, 201, JSON.stringify(made.body));
        ids.push(made.body.id);
      }
      // Nothing moves carol's money between here and the transfers below: every later posting is watched.
      const [{ seq: fromSeq }] = await postingSequence(carol.account.id, 0).then((all) => all.slice(-1));

      // 40 transfers both ways: carol sends 2.00 to 10.00 (114.00 in all), dave 1.00 to 9.00 (96.00).
      // Whatever order the ledger takes them in, carol's balance crosses 50.00 while transfers are in
      // flight: it ends at 42.00 if none is refused, and one of hers is refused only below 10.00.
      const sent = Array.from({ length: 40 }, (_, i) => (i % 2 === 0
        ? transferOnce(carol.key, { recipient_email: dave.email, amount: `${(i % 9) + 2}.00`, currency: 'USD' })
        : transferOnce(dave.key, { recipient_email: carol.email, amount: `${(i % 9) + 1}.00`, currency: 'USD' })));
      // The first crossing round has committed: the ledger dies before, or while, it is published.
      await eventually(async () => ((await crossingEvents(carol.account.id)).length > 0 ? true : undefined), 60_000, 'a first crossing')
        .catch(async (error) => { throw new Error(`${error.message}; carol's postings: ${JSON.stringify(await postingSequence(carol.account.id, 0)).slice(0, 400)}`); });
      child.kill('SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));
      child = null;
      service.roles[index] = await restartLedger(service);
      restarted = true;

      const statuses = await Promise.all(sent);
      for (const status of statuses) assert.ok([201, 200, 422].includes(status), `a transfer answered ${status}`);
      // Then, with the ledger back, across 70.00 and 50.00 once more each: up to 75.00 and down to
      // 45.00, or down first where refusals of hers left her above 70.00 (dave has the rest of 120.00).
      const [{ after: settled }] = await postingSequence(carol.account.id, fromSeq).then((all) => all.slice(-1));
      const walk = settled.isLessThan('70.00')
        ? [{ from: dave, to: carol, amount: new Money('75.00').minus(settled) }, { from: carol, to: dave, amount: new Money('30.00') }]
        : [{ from: carol, to: dave, amount: settled.minus('45.00') }, { from: dave, to: carol, amount: new Money('30.00') }];
      for (const step of walk) {
        assert.equal(await transferOnce(step.from.key, { recipient_email: step.to.email, amount: step.amount.toFixed(2), currency: 'USD' }), 201, `from ${settled.toFixed(2)}`);
      }
      const sequence = await postingSequence(carol.account.id, fromSeq);
      const expected = sequence.flatMap((p) => alerts.flatMap((a, k) => {
        const beyond = (v: Amount) => (a.direction === 'below' ? v.isLessThan(a.threshold) : v.isGreaterThan(a.threshold));
        return !beyond(p.before) && beyond(p.after) ? [`${ids[k]} ${p.id}`] : [];
      }));
      assert.ok(expected.length >= 2, `the transfers crossed the thresholds (${expected.length} crossings)`);
      const events = await crossingEvents(carol.account.id);
      assert.deepEqual(events.map((e) => `${e.alert} ${e.posting}`), expected, 'each crossing announced once, in the order of its postings');

      // Delivered to the endpoint, each event once: a round left unpublished by the crash is published by the sweeper.
      await receiver.waitFor(expected.length, (r) => r.event.type === 'balance.threshold_crossed', 90_000);
      // Once nothing is left to publish, a second delivery of any event would have come in a moment.
      await eventually(async () => (Number((await db().raw('SELECT count(*) AS n FROM outbox_rounds')).rows[0].n) === 0 ? true : undefined), 60_000, 'the outbox empty');
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const delivered = receiver.received.map((r) => r.event.id as string).sort();
      assert.deepEqual(delivered, events.map((e) => e.id).sort(), 'each event delivered exactly once');
    } finally {
      child?.kill('SIGKILL');
      await receiver.close();
      if (!restarted) service.roles[index] = await restartLedger(service);
    }
  });
});
