// A bad command is decided alone (issue: trust in the ledger): whatever one command carries (an id
// in another form, text Postgres cannot store, a payload the deciders cannot read), the ledger
// refuses that command with a final answer kept under its id, and commits the rest of its round.
// The dead-letter topic keeps only bytes that do not decode; each is recorded, listed on an
// operator route and replayed from there.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { TOPICS } from '../../src/kafka/topics';
import { testService } from '../hooks';
import { signUp } from '../support/accounts';
import { call, eventually } from '../support/http';
import { violations } from '../support/load';

type Envelope = Omit<LedgerCommandEnvelope, 'payload'> & { payload: string };

const command = (accountId: string, type: string, payload: unknown): Envelope => ({
  id: randomUUID(), type: type as LedgerCommandEnvelope['type'], account_id: accountId, reply_to: null, issued_at: new Date().toISOString(),
  payload: typeof payload === 'string' ? payload : JSON.stringify(payload), idempotency_key: null, fingerprint: null, request_id: null,
});

const faucet = (accountId: string) => command(accountId, 'faucet.credit', { entry_id: randomUUID(), currency: 'USD', amount: '1.00' });

describe('ledger screening: a bad command is decided alone', () => {
  const runtime = () => testService().runtime;
  const masterKey = () => testService().runtime.config.masterKey;
  afterEach(async () => assert.deepEqual(await violations(runtime().db), {}, 'the ledger invariants hold'));

  /** Sends the commands in one produce, on one partition: the ledger decides them in one round. */
  async function sendTogether(commands: Envelope[]): Promise<void> {
    const messages = await Promise.all(commands.map(async (c) => ({ key: 'one-round', value: await runtime().codec.encode(TOPICS.ledgerCommands, c) })));
    await runtime().producer.send({ topic: runtime().names.full(TOPICS.ledgerCommands), acks: -1, messages });
  }

  /** The outcomes the ledger kept, by command id, once every command is decided. */
  async function decided(ids: string[]): Promise<Map<string, { kind: string; code?: string; field?: string | null }>> {
    return eventually(async () => {
      const rows: Array<{ command_id: string; outcome: { kind: string; code?: string; field?: string | null } }> =
        await runtime().db('processed_commands').whereIn('command_id', ids).select('command_id', 'outcome');
      return rows.length === ids.length ? new Map(rows.map((r) => [r.command_id, r.outcome])) : undefined;
    }, 30_000, `${ids.length} commands decided`);
  }

  it('refuses each malformed command alone with invalid_request naming the field, and credits every good one of the same round', async () => {
    const owner = await signUp(testService().baseUrl);
    const id = owner.account.id;
    const bad = {
      urnQuote: command(id, 'fx.execute', { quote_id: `urn:uuid:${randomUUID()}`, entry_id: randomUUID() }),
      upperAccount: command(id.toUpperCase(), 'faucet.credit', { entry_id: randomUUID(), currency: 'USD', amount: '1.00' }),
      nulText: command(id, 'transfer.create', { transfer_id: randomUUID(), type: 'internal', amount: '1.00', currency: 'USD', recipient_email: 'a@b.c', note: 'x\u0000y' }),
      loneSurrogate: command(id, 'faucet.credit', { entry_id: randomUUID(), currency: 'USD', amount: '1.00', memo: '\ud800' }),
      notJson: command(id, 'faucet.credit', '{"entry_id":'),
      floatAmount: command(id, 'faucet.credit', { entry_id: randomUUID(), currency: 'USD', amount: 1e21 }),
      unknownCurrency: command(id, 'faucet.credit', { entry_id: randomUUID(), currency: 'XXX', amount: '1.00' }),
      unknownType: command(id, 'money.print', {}),
    };
    const good = Array.from({ length: 6 }, () => faucet(id));
    const all = [good[0], ...Object.values(bad).slice(0, 4), good[1], good[2], ...Object.values(bad).slice(4), ...good.slice(3)];
    await sendTogether(all);
    const outcomes = await decided(all.map((c) => c.id));
    for (const c of good) assert.equal(outcomes.get(c.id)!.kind, 'faucet_credit', 'a good command of the round is decided on its merits');
    const expectedFields: Record<keyof typeof bad, string> = {
      urnQuote: 'quote_id', upperAccount: 'account_id', nulText: 'note', loneSurrogate: 'memo', notJson: 'payload', floatAmount: 'amount', unknownCurrency: 'currency', unknownType: 'type',
    };
    for (const [name, c] of Object.entries(bad) as Array<[keyof typeof bad, Envelope]>) {
      const outcome = outcomes.get(c.id)!;
      assert.equal(outcome.kind, 'refused', `${name} is refused`);
      assert.equal(outcome.code, 'invalid_request', name);
      assert.equal(outcome.field, expectedFields[name], `${name} names its field`);
    }
    const balance = await call(testService().baseUrl, 'GET', '/v1/accounts/me/balance', undefined, { token: owner.token });
    assert.equal(balance.body.totals.find((t: { currency: string }) => t.currency === 'USD').available, '6.00', 'six credits, none of the refused');
    const letters = await call(testService().baseUrl, 'GET', `/v1/dead-letters?topic=${runtime().names.full(TOPICS.ledgerCommands)}`, undefined, { token: masterKey() });
    assert.equal(letters.status, 200);
    const ours = new Set(all.map((c) => c.id));
    const dead = letters.body.data.filter((l: { key: string | null }) => ours.has(l.key ?? ''));
    assert.deepEqual(dead, [], 'nothing of the round reached the dead-letter topic');
  });

  it('refuses malformed wallet and hold commands alone, naming the field, and decides the rest of their round', async () => {
    const owner = await signUp(testService().baseUrl);
    const id = owner.account.id;
    const bad = {
      sideNotAWallet: command(id, 'wallet.transfer', { wallet_transfer_id: randomUUID(), from_wallet_id: 'MAIN', to_wallet_id: randomUUID(), amount: '1.00', currency: 'USD', description: null }),
      expiryNotAnInstant: command(id, 'hold.create', { hold_id: randomUUID(), amount: '1.00', currency: 'USD', wallet_id: null, expires_at: 'tomorrow', description: null }),
      walletNotAnId: command(id, 'hold.create', { hold_id: randomUUID(), amount: '1.00', currency: 'USD', wallet_id: 7, expires_at: new Date(Date.now() + 60_000).toISOString(), description: null }),
      descriptionNotText: command(id, 'hold.create', { hold_id: randomUUID(), amount: '1.00', currency: 'USD', wallet_id: null, expires_at: new Date(Date.now() + 60_000).toISOString(), description: { a: 1 } }),
      captureWithoutRecipient: command(id, 'hold.capture', { hold_id: randomUUID(), capture_id: randomUUID(), transfer_id: randomUUID(), amount: '1.00', final: false, note: null }),
      finalNotBoolean: command(id, 'hold.capture', { hold_id: randomUUID(), capture_id: randomUUID(), transfer_id: randomUUID(), amount: '1.00', final: 'yes', recipient_email: 'a@b.c', note: null }),
    };
    const good = Array.from({ length: 3 }, () => faucet(id));
    const all = [good[0], ...Object.values(bad).slice(0, 3), good[1], ...Object.values(bad).slice(3), good[2]];
    await sendTogether(all);
    const outcomes = await decided(all.map((c) => c.id));
    for (const c of good) assert.equal(outcomes.get(c.id)!.kind, 'faucet_credit', 'a good command of the round is decided on its merits');
    const expectedFields: Record<keyof typeof bad, string> = {
      sideNotAWallet: 'from_wallet_id', expiryNotAnInstant: 'expires_at', walletNotAnId: 'wallet_id', descriptionNotText: 'description',
      captureWithoutRecipient: 'recipient_email', finalNotBoolean: 'final',
    };
    for (const [name, c] of Object.entries(bad) as Array<[keyof typeof bad, Envelope]>) {
      const outcome = outcomes.get(c.id)!;
      assert.deepEqual([outcome.kind, outcome.code, outcome.field], ['refused', 'invalid_request', expectedFields[name]], name);
    }
    const { rows } = await runtime().db.raw('SELECT count(*)::int AS n FROM holds WHERE account_id = ?', [id]);
    assert.equal(rows[0].n, 0, 'no hold was made');
  });

  it('refuses, with a final answer kept for retries, a command that fails in its round for a reason no screen foresaw', async () => {
    const owner = await signUp(testService().baseUrl);
    // An internal transfer without its recipient: well-formed, yet the round cannot plan it.
    const odd = command(owner.account.id, 'transfer.create', { transfer_id: randomUUID(), type: 'internal', amount: '1.00', currency: 'USD', note: null });
    const good = [faucet(owner.account.id), faucet(owner.account.id)];
    await sendTogether([good[0], odd, good[1]]);
    const outcomes = await decided([odd.id, ...good.map((c) => c.id)]);
    assert.equal(outcomes.get(odd.id)!.kind, 'refused');
    assert.equal(outcomes.get(odd.id)!.code, 'invalid_request');
    for (const c of good) assert.equal(outcomes.get(c.id)!.kind, 'faucet_credit');
    // Delivered again, it is answered from the record: still one refusal, nothing moved. A new
    // credit follows it on its partition, which the ledger decides in order: once the credit is
    // decided, so is the repeat.
    const recorded = await runtime().db('processed_commands').where('command_id', odd.id).select();
    const sentinel = faucet(owner.account.id);
    await sendTogether([odd, sentinel]);
    assert.equal((await decided([sentinel.id])).get(sentinel.id)!.kind, 'faucet_credit');
    assert.deepEqual(await runtime().db('processed_commands').where('command_id', odd.id).select(), recorded, 'the refusal as first recorded');
    const balance = await call(testService().baseUrl, 'GET', '/v1/accounts/me/balance', undefined, { token: owner.token });
    assert.equal(balance.body.totals.find((t: { currency: string }) => t.currency === 'USD').available, '3.00', 'the three credits alone');
  });

  it('records bytes that do not decode as a dead letter an operator lists, counts and replays; the master key alone', async () => {
    const owner = await signUp(testService().baseUrl);
    const key = `undecodable-${randomUUID()}`;
    await runtime().producer.send({ topic: runtime().names.full(TOPICS.ledgerCommands), acks: -1, messages: [{ key, value: Buffer.from('not avro at all') }] });
    const base = testService().baseUrl;
    const letter = await eventually(async () => {
      const page = await call(base, 'GET', '/v1/dead-letters?replayed=false', undefined, { token: masterKey() });
      return page.body.data.find((l: { key: string }) => l.key === key);
    }, 30_000, 'the dead letter listed');
    assert.equal(letter.topic, runtime().names.full(TOPICS.ledgerCommands));
    assert.equal(Buffer.from(letter.value_base64, 'base64').toString(), 'not avro at all');
    assert.match(letter.reason, /undecodable/);
    const summary = await call(base, 'GET', '/v1/dead-letters/summary', undefined, { token: masterKey() });
    assert.ok(summary.body.waiting[letter.topic] >= 1);
    assert.equal((await call(base, 'GET', '/v1/dead-letters', undefined, { token: owner.key })).status, 403, 'a secret key is not an operator');
    const replayed = await call(base, 'POST', `/v1/dead-letters/${letter.id}/replay`, undefined, { token: masterKey(), idempotencyKey: randomUUID() });
    assert.equal(replayed.status, 200, JSON.stringify(replayed.body));
    assert.ok(replayed.body.replayed_at);
    // The bytes went back to their topic, and still do not decode: a second record of them.
    await eventually(async () => {
      const page = await call(base, 'GET', '/v1/dead-letters', undefined, { token: masterKey() });
      const copies = page.body.data.filter((l: { key: string }) => l.key === key);
      return copies.length === 2 ? true : undefined;
    }, 30_000, 'the replayed message set aside again');
  });
});
