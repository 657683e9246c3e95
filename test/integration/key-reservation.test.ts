// One Idempotency-Key, one owner, across both kinds of idempotent route (DESIGN.md section 5): the
// request that reserves a key first owns it, and any other request under it (another route,
// another body) is 409 idempotency_conflict at once, even while the owner's command is still in
// Kafka; a same-body retry of that command is answered as pending, then with its decision. The
// ledger is held by stopping this service's ledger role, so commands wait in Kafka.
import Redis from 'ioredis';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { restartLedger } from '../support/service';
import { KEY_CONFLICT } from '../../ledger/outcome';
import { idempotentCommandId } from '../../src/idempotency/derived-ids';
import { db, testService } from '../hooks';
import { signUp, uniqueEmail, type SignedUp } from '../support/accounts';
import { expectError } from '../support/expect';
import { call, type JsonResponse } from '../support/http';
import { balances, fund, transferReaches } from '../support/money';

/** "At once": well under the ledger's reply wait (LEDGER_REPLY_TIMEOUT_MS, 2 s), so no command waited for a decision. */
const AT_ONCE_MS = 1_000;

async function timed(request: Promise<JsonResponse>): Promise<{ response: JsonResponse; ms: number }> {
  const started = Date.now();
  const response = await request;
  return { response, ms: Date.now() - started };
}

function expectConflictAtOnce({ response, ms }: { response: JsonResponse; ms: number }, what: string): void {
  expectError(response, 409, 'idempotency_conflict', 'Idempotency-Key', what);
  assert.equal(response.body.message, KEY_CONFLICT.message, what);
  assert.ok(ms < AT_ONCE_MS, `${what}: answered in ${ms} ms`);
}

describe('one reservation per (account, Idempotency-Key) across every idempotent route', function () {
  this.timeout(60_000);
  const base = () => testService().baseUrl;

  /** Runs `during` with the ledger stopped (its commands wait in Kafka), then starts it again. */
  async function withLedgerHeld<T>(during: () => Promise<T>): Promise<T> {
    const service = testService();
    const index = service.roles.findIndex((r) => r.role === 'ledger');
    assert.ok(index >= 0, 'the test service runs the ledger');
    await service.roles[index].stop();
    try {
      return await during();
    } finally {
      service.roles[index] = await restartLedger(service);
    }
  }

  async function pair(): Promise<{ sender: SignedUp; recipient: SignedUp }> {
    const sender = await signUp(base());
    const recipient = await signUp(base());
    await fund(base(), sender.key, 'USD', '100.00');
    return { sender, recipient };
  }

  const contacts = async (owner: SignedUp) => (await call(base(), 'GET', '/v1/contacts', undefined, { token: owner.key })).body.data;

  it('refuses a contact under the key of a transfer still in Kafka, and the transfer is then created and completed', async () => {
    const { sender, recipient } = await pair();
    const key = `pay-${randomUUID()}`;
    const body = { recipient_email: recipient.email, amount: '10.00', currency: 'USD' };
    const pending = await withLedgerHeld(async () => {
      const first = await call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key });
      assert.equal(first.status, 202, JSON.stringify(first.body));
      assert.equal(first.body.status, 'pending');

      expectConflictAtOnce(await timed(call(base(), 'POST', '/v1/contacts', { name: 'Ada', email: uniqueEmail('contact') }, { token: sender.key, idempotencyKey: key })),
        'a contact under the key of the transfer in flight');
      expectConflictAtOnce(await timed(call(base(), 'POST', '/v1/sandbox/faucet', { currency: 'USD', amount: '5.00' }, { token: sender.key, idempotencyKey: key })),
        'another route the ledger decides');
      expectConflictAtOnce(await timed(call(base(), 'POST', '/v1/transfers', { ...body, amount: '11.00' }, { token: sender.key, idempotencyKey: key })),
        'the same route with another body');

      const retry = await call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key });
      assert.deepEqual([retry.status, retry.body.status, retry.body.transfer_id], [202, 'pending', first.body.transfer_id], 'a same-body retry is still pending');
      return first.body;
    });

    const completed = await transferReaches(base(), sender.key, pending.transfer_id, 'completed');
    assert.equal(completed.amount, '10.00');
    const replay = await call(base(), 'POST', '/v1/transfers', body, { token: sender.key, idempotencyKey: key });
    assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed'), replay.body.transfer_id, replay.body.status], [200, 'true', pending.transfer_id, 'completed']);
    assert.equal((await balances(base(), sender.token)).USD.available, '90.00', 'debited once');
    assert.equal((await balances(base(), recipient.token)).USD.available, '10.00', 'credited once');
    assert.deepEqual(await contacts(sender), [], 'no contact was created');
  });

  it('refuses a transfer under the key of a contact at once: no command is sent, no money moves', async () => {
    const { sender, recipient } = await pair();
    const key = `contact-${randomUUID()}`;
    const contactBody = { name: 'Grace', email: uniqueEmail('contact') };
    const later = randomUUID();
    const laterTransfer = await withLedgerHeld(async () => {
      const contact = await call(base(), 'POST', '/v1/contacts', contactBody, { token: sender.key, idempotencyKey: key });
      assert.equal(contact.status, 201, JSON.stringify(contact.body));
      expectConflictAtOnce(await timed(call(base(), 'POST', '/v1/transfers', { recipient_email: recipient.email, amount: '1.00', currency: 'USD' }, { token: sender.key, idempotencyKey: key })),
        'a transfer under the key of a contact');
      // A transfer after it, of the same account: the ledger reads the account's commands in order.
      const next = await call(base(), 'POST', '/v1/transfers', { recipient_email: recipient.email, amount: '2.00', currency: 'USD' }, { token: sender.key, idempotencyKey: later });
      assert.equal(next.status, 202, JSON.stringify(next.body));
      return next.body;
    });
    await transferReaches(base(), sender.key, laterTransfer.transfer_id, 'completed');
    const refused = await db()('processed_commands').where('command_id', idempotentCommandId(sender.account.id, key));
    assert.deepEqual(refused, [], 'the ledger never received a command under the contact\'s key');
    assert.equal((await db()('transfers').where('account_id', sender.account.id)).length, 1, 'only the later transfer exists');
    assert.equal((await balances(base(), sender.token)).USD.available, '98.00');
    const replay = await call(base(), 'POST', '/v1/contacts', contactBody, { token: sender.key, idempotencyKey: key });
    assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed')], [200, 'true'], 'the contact still replays');
  });

  it('leaves the key free when the request was refused before its command was sent', async () => {
    const { sender, recipient } = await pair();
    const key = randomUUID();
    const refused = await call(base(), 'POST', '/v1/transfers', { recipient_email: recipient.email, amount: '1.00', currency: 'USD', account_id: recipient.account.id }, { token: sender.key, idempotencyKey: key });
    expectError(refused, 403, 'cross_account_access_denied', 'account_id');
    const contact = await call(base(), 'POST', '/v1/contacts', { name: 'Free Key', email: uniqueEmail('contact') }, { token: sender.key, idempotencyKey: key });
    assert.equal(contact.status, 201, JSON.stringify(contact.body));
  });

  it('when Redis lost a contact\'s reservation, the ledger refuses the transfer and the contact still replays', async () => {
    const { sender, recipient } = await pair();
    const key = randomUUID();
    const contactBody = { name: 'Lost Reservation', email: uniqueEmail('contact') };
    const contact = await call(base(), 'POST', '/v1/contacts', contactBody, { token: sender.key, idempotencyKey: key });
    assert.equal(contact.status, 201, JSON.stringify(contact.body));
    const { config } = testService();
    const raw = new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await raw.connect();
    try {
      assert.equal(await raw.del(`${config.redisKeyPrefix}idem:${sender.account.id}:${key}`), 1, 'the key\'s entry was in Redis');
    } finally {
      raw.disconnect();
    }
    const transfer = await call(base(), 'POST', '/v1/transfers', { recipient_email: recipient.email, amount: '1.00', currency: 'USD' }, { token: sender.key, idempotencyKey: key });
    expectError(transfer, 409, 'idempotency_conflict', 'Idempotency-Key', 'the ledger refuses a key the API holds');
    assert.equal(transfer.body.message, KEY_CONFLICT.message);
    const replay = await call(base(), 'POST', '/v1/contacts', contactBody, { token: sender.key, idempotencyKey: key });
    assert.deepEqual([replay.status, replay.body.id], [200, contact.body.id], 'the refused transfer left no reservation behind');
    assert.equal((await balances(base(), sender.token)).USD.available, '100.00');
  });
});
