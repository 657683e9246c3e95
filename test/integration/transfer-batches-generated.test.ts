// Transfer batches over their input space: seeded random batches (1 to 50 items; internal, in a
// stablecoin, to a bank account in the same currency and in another; items of every refusal code
// the ledger gives one transfer; now and then a malformed item; atomic or not) from two senders,
// each answer checked against a small model of the senders' balances: every item answered in the
// order sent, an atomic batch all or none, each item decided against what the items before it
// left, the balances moved by exactly the created items, and each created transfer readable.
// Each seed of support/seeds.ts is a run of its own; a failure names its seed, and TEST_SEED=N replays it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Money, type Amount } from '../../ledger/money';
import { testService } from '../hooks';
import { signUp, uniqueEmail, type SignedUp } from '../support/accounts';
import { call } from '../support/http';
import { fund, transferReaches } from '../support/money';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seededCases } from '../support/seeds';

const base = () => testService().baseUrl;
const FIAT = ['USD', 'EUR', 'GBP'] as const;
const FUNDS = '400.00';
const BATCHES = 14;

type Kind = 'internal' | 'chain' | 'bank' | 'bank_fx' | 'nobody' | 'self' | 'self_bank' | 'unknown_bank' | 'too_much' | 'phantom' | 'too_small' | 'no_chain_wallet';
/** The refusal each kind gets whatever the balance, and the field it names; valid kinds are refused only for want of funds. */
const REFUSALS: Partial<Record<Kind, [string, string]>> = {
  nobody: ['recipient_not_found', 'recipient_email'], self: ['invalid_request', 'recipient_email'],
  self_bank: ['invalid_request', 'recipient.bank.account_number'], unknown_bank: ['external_send_blocked', 'recipient.bank.account_number'],
  too_much: ['insufficient_funds', 'amount'], phantom: ['phantom_recipient', 'recipient_email'], too_small: ['invalid_request', 'amount'],
  no_chain_wallet: ['sender_no_chain_wallet', 'currency'],
};

interface Item { kind: Kind; body: Record<string, unknown>; currency: string; payout: string; amount: Amount; payee: SignedUp | null }

const bankOf = (who: SignedUp, currency: string) => {
  const viban = who.vibans.find((v: any) => v.currency === currency)!;
  return { email: who.email, name: 'Payee', bank: { country: viban.bank_country, bank_name: viban.bank_name, account_number: viban.account_number, currency } };
};

async function available(who: SignedUp): Promise<Map<string, Amount>> {
  const response = await call(base(), 'GET', '/v1/wallets/main/balances', undefined, { token: who.key });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return new Map(response.body.balances.map((b: any) => [b.currency, new Money(b.available)]));
}

describe('transfer batches over their input space (seeded)', () => {
  const all = seededCases([1, 2]);
  // The batches of a run are shared among its seeds: more seeds, no more work.
  const batches = Math.ceil(BATCHES / all.length);
  for (const { seed, tag } of all) {
    it(`answers ${batches} generated batches as the model says (${replayOf(seed)})${tag}`, async function () {
      this.timeout(240_000);
      await namingSeed(seed, () => run(seed, batches));
    });
  }
});

async function run(seed: number, batches: number): Promise<void> {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  // Two senders (one without a chain wallet), two payees (one without a chain wallet: no stablecoin reaches it).
  const [chained, unchained, payee, plain] = await Promise.all([
    signUp(base(), { chain_wallet: true }), signUp(base()), signUp(base(), { chain_wallet: true }), signUp(base()),
  ]);
  const senders = [chained, unchained];
  // The model: each account's available per currency, as the created items leave it.
  const model = new Map<string, Map<string, Amount>>();
  const balanceOf = (who: SignedUp, currency: string) => model.get(who.account.id)?.get(currency) ?? new Money(0);
  const move = (who: SignedUp, currency: string, amount: Amount) => {
    const own = model.get(who.account.id) ?? new Map<string, Amount>();
    own.set(currency, balanceOf(who, currency).plus(amount));
    model.set(who.account.id, own);
  };
  for (const sender of senders) {
    for (const currency of [...FIAT, ...(sender === chained ? ['USDC'] : [])]) {
      await fund(base(), sender.key, currency, FUNDS);
      move(sender, currency, new Money(FUNDS));
    }
  }
  const throughRails: Array<{ sender: SignedUp; id: string; item: Item }> = [];

  for (let n = 0; n < batches; n++) {
    const sender = pick(senders);
    const size = random() < 0.3 ? 1 + Math.floor(random() * 3) : 1 + Math.floor(random() * 50);
    const atomic = random() < 0.5;
    const items: Item[] = Array.from({ length: size }, () => {
      const kind: Kind = random() < 0.7 ? pick(['internal', 'internal', 'chain', 'bank', 'bank_fx'] as const) : pick(Object.keys(REFUSALS) as Kind[]);
      const currency = pick(FIAT);
      const other = pick(FIAT.filter((c) => c !== currency));
      // Amounts of 0.02 (a cent buys something in any other currency) to 30.00: fifty of them
      // outgrow the balance, so late items meet insufficient_funds.
      const amount = new Money(2 + Math.floor(random() * 2_999)).dividedBy(100).toFixed(2);
      const to = pick([payee, plain]);
      const item = (body: Record<string, unknown>, c: string, payout: string, who: SignedUp | null): Item => ({ kind, body, currency: c, payout, amount: new Money(body.amount as string), payee: who });
      switch (kind) {
        case 'internal': return item({ recipient_email: to.email, amount, currency }, currency, currency, to);
        case 'chain': return sender === chained ? item({ recipient_email: payee.email, amount, currency: 'USDC' }, 'USDC', 'USDC', payee) : item({ recipient_email: to.email, amount, currency }, currency, currency, to);
        case 'bank': return item({ recipient: bankOf(to, currency), amount, currency }, currency, currency, to);
        case 'bank_fx': return item({ recipient: bankOf(to, other), amount, currency }, currency, other, to);
        case 'nobody': return item({ recipient_email: uniqueEmail('nobody'), amount, currency }, currency, currency, null);
        case 'self': return item({ recipient_email: sender.email, amount, currency }, currency, currency, null);
        case 'self_bank': return item({ recipient: bankOf(sender, currency), amount, currency }, currency, currency, null);
        case 'unknown_bank': {
          const bank = { country: 'DE', bank_name: 'Nobank', account_number: `DE00${String(Math.floor(random() * 1e12)).padStart(18, '7')}`, currency };
          return item({ recipient: { email: 'x@example.com', name: 'X', bank }, amount, currency }, currency, currency, null);
        }
        case 'too_much': return item({ recipient_email: to.email, amount: '90000.00', currency }, currency, currency, null);
        // Needs a sender with a chain wallet; from the other sender it is refused for that first.
        case 'phantom': return item({ recipient_email: plain.email, amount, currency: 'USDC' }, 'USDC', 'USDC', null);
        // USD or EUR to GBP: one cent buys nothing.
        case 'too_small': {
          const from = pick(['USD', 'EUR'] as const);
          return item({ recipient: bankOf(to, 'GBP'), amount: '0.01', currency: from }, from, 'GBP', null);
        }
        // From the sender with a chain wallet, a stablecoin transfer like any other.
        case 'no_chain_wallet': return item({ recipient_email: payee.email, amount, currency: 'USDC' }, 'USDC', 'USDC', payee);
      }
    });
    const what = `batch ${n} (${atomic ? 'atomic' : 'not atomic'}, ${items.map((i) => i.kind).join(',')})`;

    // Now and then one item is malformed: 400 for the whole batch, naming it, and nothing decided.
    if (random() < 0.15) {
      const at = Math.floor(random() * items.length);
      const transfers = items.map((it, i) => (i === at ? { ...it.body, amount: '1.0000001' } : it.body));
      const before = await available(sender);
      const response = await call(base(), 'POST', '/v1/transfer-batches', { atomic, transfers }, { token: sender.key, idempotencyKey: randomUUID() });
      assert.deepEqual([response.status, response.body?.details], [400, `transfers[${at}].amount`], `${what} with item ${at} malformed: ${JSON.stringify(response.body)}`);
      assert.deepEqual(await available(sender), before, `${what} with a malformed item moved money`);
      continue;
    }

    // What the model expects of each item, in order, against the balance the items before it left.
    const expected = items.map((it) => {
      const refusal = REFUSALS[it.kind];
      // A stablecoin from the sender without a chain wallet is refused for that before anything else.
      if (it.currency === 'USDC' && sender === unchained) return { status: 'refused', code: 'sender_no_chain_wallet', field: 'currency' };
      if (refusal && it.kind !== 'no_chain_wallet') return { status: 'refused', code: refusal[0], field: refusal[1] };
      if (balanceOf(sender, it.currency).isLessThan(it.amount)) return { status: 'refused', code: 'insufficient_funds', field: 'amount' };
      move(sender, it.currency, it.amount.negated());
      return { status: 'created', code: null, field: null };
    });
    const refusedAny = expected.some((e) => e.status === 'refused');
    if (atomic && refusedAny) {
      // All or none: the items that fitted are undone, and their money stays.
      expected.forEach((e, i) => {
        if (e.status !== 'created') return;
        e.status = 'not_created';
        move(sender, items[i].currency, items[i].amount);
      });
    }
    const createdCount = expected.filter((e) => e.status === 'created').length;

    const response = await call(base(), 'POST', '/v1/transfer-batches', { atomic, transfers: items.map((it) => it.body) }, { token: sender.key, idempotencyKey: randomUUID() });
    assert.equal(response.status, 201, `${what}: ${JSON.stringify(response.body).slice(0, 500)}`);
    const answered = response.body.items.map((it: any) => ({ status: it.status, code: it.error?.error ?? null, field: it.error?.details ?? null }));
    assert.deepEqual(answered, expected.map((e, i) => ({ ...e, field: e.field === null ? null : `transfers[${i}].${e.field}` })), `${what}: the items, in order`);
    assert.equal(response.body.status, createdCount === items.length ? 'completed' : createdCount === 0 ? 'failed' : 'partial', what);
    assert.equal(response.body.atomic, atomic, what);

    for (const [i, it] of response.body.items.entries()) {
      if (it.status !== 'created') {
        assert.equal(it.transfer_id, null, `${what}: item ${i} names no transfer`);
        continue;
      }
      const item = items[i];
      const read = await call(base(), 'GET', `/v1/transfers/${it.transfer_id}`, undefined, { token: sender.key });
      assert.equal(read.status, 200, `${what}: item ${i}'s transfer ${it.transfer_id}: ${JSON.stringify(read.body)}`);
      assert.deepEqual([read.body.transfer_id, new Money(read.body.amount).toFixed(2), read.body.currency], [it.transfer_id, item.amount.toFixed(2), item.currency], `${what}: item ${i} as sent`);
      // To a bank, or a stablecoin over the chain: the rail pays it later. Between members in fiat:
      // settled in the round.
      if (item.kind === 'bank' || item.kind === 'bank_fx' || item.currency === 'USDC') throughRails.push({ sender, id: it.transfer_id, item });
      else move(item.payee!, item.payout, item.amount);
    }
    for (const who of senders) {
      const shown = await available(who);
      for (const currency of [...FIAT, 'USDC']) {
        assert.equal((shown.get(currency) ?? new Money(0)).toFixed(2), balanceOf(who, currency).toFixed(2), `${what}: ${who === chained ? 'the sender with' : 'the sender without'} a chain wallet's ${currency}`);
      }
    }
  }

  // Transfers through a rail (a bank, the chain): each completes and pays its payee the payout it shows.
  for (const { sender, id, item } of throughRails) {
    const done = await transferReaches(base(), sender.key, id, 'completed', 60_000);
    move(item.payee!, item.payout, new Money(done.payout?.amount ?? done.amount));
  }
  for (const who of [payee, plain]) {
    const shown = await available(who);
    for (const currency of [...FIAT, 'USDC']) {
      assert.equal((shown.get(currency) ?? new Money(0)).toFixed(2), balanceOf(who, currency).toFixed(2), `the payee ${who === payee ? 'with' : 'without'} a chain wallet's ${currency}`);
    }
  }
}
