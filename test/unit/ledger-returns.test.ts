// Returns of transfers paid through a partner (ledger/reversal-parts.ts, ledger/returns.ts,
// ledger/commands/transfer-return-result.ts, transfer-reverse.ts): the exact half-even quotient against integer arithmetic;
// the cumulative parts over a seeded space of amounts, rates and divisions (the parts of a whole
// reversal add up to each leg exactly, each within one unit of its proportion, never below zero,
// failures in between); the refusals of a return in order of precedence; then a seeded walk of
// returns asked, completed, failed, repeated and answered late, the ledger's invariants checked
// after every step. Pure: no Postgres, no broker.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BalanceBook } from '../../ledger/balances';
import { available, faucetEquity, fxPosition, fxSpread, pending, type LedgerAccountRef } from '../../ledger/chart';
import { COMMANDS, type Locked } from '../../ledger/commands';
import type { Decision } from '../../ledger/decision';
import { decideReturnResult } from '../../ledger/commands/transfer-return-result';
import { price } from '../../ledger/fx-rates';
import type { TransferReturnResult } from '../../ledger/commands/transfer-return-result';
import type { TransferReverse } from '../../ledger/commands/transfer-reverse';
import { CURRENCY_SCALE, Money, type Currency } from '../../ledger/money';
import { conversionOf, conversionSpread, faucetCredit, holdForTransfer, settleTransfer } from '../../ledger/postings';
import { cumulativePart, roundedQuotient } from '../../ledger/reversal-parts';
import type { TransferRecord } from '../../ledger/transfers';
import { prng } from '../support/prng';
import { namingSeed, replayOf, seeds } from '../support/seeds';
import { decidedTransfer, partnerCommandOf } from '../support/decisions';

const NOW = new Date('2026-12-05T12:00:00.000Z');
const SENDER = '11111111-1111-4111-8111-111111111111';
const PAYEE = '22222222-2222-4222-8222-222222222222';

/** `n / d` rounded half-even to an integer, in BigInt: the reference the decimal quotient is held to. */
function halfEven(n: bigint, d: bigint): bigint {
  const q = n / d;
  const twice = 2n * (n - q * d);
  return twice > d || (twice === d && q % 2n !== 0n) ? q + 1n : q;
}

const cents = (random: () => number, max: number) => BigInt(1 + Math.floor(random() * max));

describe('return parts', () => {
  for (const seed of seeds([1, 44])) {
    it(`rounds a quotient half-even exactly, as integer arithmetic does (seed ${seed}, ${replayOf(seed)})`, () => namingSeed(seed, () => {
      const random = prng(seed);
      for (let i = 0; i < 2_000; i++) {
        const scale = random() < 0.5 ? 2 : 6;
        // A numerator of 4 decimals over a denominator of 2: the shapes of total × cumulative / amount.
        const n = cents(random, 10 ** 9) * (random() < 0.1 ? 2n * cents(random, 50) : 1n);
        const d = cents(random, 10 ** 6);
        const expected = halfEven(n * 10n ** BigInt(scale) * 100n, d * 10_000n);
        const got = roundedQuotient(new Money(n.toString()).dividedBy(10_000), new Money(d.toString()).dividedBy(100), scale);
        assert.equal(got.toFixed(scale), new Money(expected.toString()).dividedBy(new Money(10).exponentiatedBy(scale)).toFixed(scale), `${n}/10^4 ÷ ${d}/100`);
      }
    }));

    it(`gives back each leg exactly in parts that add up to a whole reversal, each within one unit (seed ${seed}, ${replayOf(seed)})`, () => namingSeed(seed, () => {
      const random = prng(seed);
      for (let i = 0; i < 500; i++) {
        const [from, to] = ([['USD', 'EUR'], ['USD', 'GBP'], ['EUR', 'GBP'], ['GBP', 'USD']] as const)[Math.floor(random() * 4)];
        const amount = new Money(cents(random, 10_000_000).toString()).dividedBy(100);
        const quoted = price(from, to, amount, new Date(NOW.getTime() + Math.floor(random() * 3_600_000)));
        const total = new Money(quoted.toAmount);
        if (total.isZero()) continue;
        const spread = conversionSpread({ from, to, fromAmount: amount, toAmount: total, midRate: new Money(quoted.midRate) });
        const unit = new Money(1).shiftedBy(-CURRENCY_SCALE[to]);
        let live = new Money(0);
        let failures = 0;
        const taken = { payout: new Money(0), spread: new Money(0) };
        for (let step = 0; !live.isEqualTo(amount); step++) {
          const left = amount.minus(live);
          const asked = step > 8 || random() < 0.2 ? left : Money.max(new Money(0.01), left.times(random()).decimalPlaces(2, Money.ROUND_DOWN));
          const payout = cumulativePart(total, amount, live.plus(asked), taken.payout, to);
          const part = cumulativePart(spread, amount, live.plus(asked), taken.spread, to);
          assert.ok(!payout.isNegative() && !part.isNegative(), 'a part is never below zero');
          if (random() < 0.25 && !asked.isEqualTo(left)) {
            failures += 1; // it frees its part, and the next ones make up for it
            continue;
          }
          const exact = total.times(asked).dividedBy(amount);
          if (failures === 0) assert.ok(payout.minus(exact).abs().isLessThanOrEqualTo(unit), `${payout.toFixed()} is more than a unit from ${exact.toFixed()}`);
          live = live.plus(asked);
          taken.payout = taken.payout.plus(payout);
          taken.spread = taken.spread.plus(part);
        }
        assert.deepEqual([taken.payout.toFixed(), taken.spread.toFixed()], [total.toFixed(), spread.toFixed()], `${amount.toFixed()} ${from} → ${total.toFixed()} ${to}`);
      }
    }));
  }
});

// ---------------------------------------------------------------------------------------------
// The ledger's side, on a BalanceBook in memory: a conversion of `amount` USD paid to the payee in
// EUR, settled as the partner's completion settles it.

interface World { book: BalanceBook; refs: LedgerAccountRef[]; transfer: TransferRecord }

function world(amount: string, to: Currency = 'EUR'): World {
  const refs = [
    faucetEquity('USD'), faucetEquity(to), fxPosition('USD'), fxPosition(to), fxSpread(to),
    ...[SENDER, PAYEE].flatMap((id) => [available(id, 'USD'), pending(id, 'USD'), available(id, to), pending(id, to)]),
  ];
  const book = new BalanceBook([...new Map(refs.map((ref) => [ref.code, { id: randomUUID(), ref, balance: new Money(0) }])).values()]);
  const quoted = price('USD', to, new Money(amount), NOW);
  const transfer: TransferRecord = {
    id: randomUUID(), account_id: SENDER, from_wallet_id: null, command_id: randomUUID(), type: 'external', status: 'completed', amount, currency: 'USD',
    payout_amount: quoted.toAmount, payout_currency: to, fx_rate: quoted.rate, fx_mid_rate: quoted.midRate, fx_spread: quoted.spread,
    recipient_account_id: PAYEE, recipient: {}, note: null, metadata: {}, partner: 'fiat', partner_payment_id: 'fiat_0001', failure_code: null, failure_message: null,
    estimated_arrival: 'within a minute', created_at: NOW, updated_at: NOW, completed_at: NOW, reversed_amount: '0', reversals: [],
  };
  book.apply(faucetCredit(randomUUID(), SENDER, 'USD', new Money(amount)));
  book.apply(holdForTransfer(randomUUID(), transfer.id, SENDER, null, 'USD', new Money(amount)));
  book.apply(settleTransfer(randomUUID(), transfer.id, SENDER, PAYEE, 'USD', new Money(amount), conversionOf(transfer)));
  return { book, refs, transfer };
}

const locked = (transfer: TransferRecord): Locked => ({
  transfers: new Map([[transfer.id, transfer]]), quotes: new Map(), payments: new Map(), faucetToday: new Map(), wallets: new Map(), holds: new Map(),
});

function reverse(w: World, amount: string | null, accountId = SENDER): Decision {
  const payload: TransferReverse = { transfer_id: w.transfer.id, reversal_id: randomUUID(), amount, reason: null };
  const decision = COMMANDS['transfer.reverse'].decide({ commandId: randomUUID(), accountId, payload, facts: {} as never, locked: locked(w.transfer), book: w.book, now: NOW });
  w.transfer = decidedTransfer(decision) ?? w.transfer;
  return decision;
}

function answer(w: World, reversalId: string, outcome: TransferReturnResult['outcome']): Decision {
  const result: TransferReturnResult = { transfer_id: w.transfer.id, reversal_id: reversalId, outcome, partner_return_id: `fiat_r_${reversalId}`, failure_code: outcome === 'failed' ? 'partner_declined' : null, failure_message: null };
  const decision = decideReturnResult(result, w.transfer, w.book, NOW);
  w.transfer = decidedTransfer(decision) ?? w.transfer;
  return decision;
}

const code = (decision: Decision) => (decision.outcome.kind === 'refused' ? decision.outcome.code : decision.outcome.kind);
const balance = (w: World, ref: LedgerAccountRef) => w.book.balance(ref).toFixed();

/** Every currency of the book sums to zero, no customer balance is below zero, and the transfer's record agrees with the payee's pending. */
function assertInvariants(w: World): void {
  for (const currency of new Set(w.refs.map((r) => r.currency))) {
    const sum = w.refs.filter((r) => r.currency === currency).reduce((total, ref) => total.plus(w.book.balance(ref)), new Money(0));
    assert.ok(sum.isZero(), `${currency} sums to ${sum.toFixed()}`);
  }
  for (const ref of w.refs) if (ref.kind !== 'system') assert.ok(!w.book.balance(ref).isNegative(), ref.code);
  const reversals = w.transfer.reversals ?? [];
  const live = reversals.filter((r) => r.status !== 'failed').reduce((total, r) => total.plus(r.amount), new Money(0));
  assert.ok(live.isEqualTo(w.transfer.reversed_amount!) && live.isLessThanOrEqualTo(w.transfer.amount), 'reversed_amount is the sum of the live reversals, within the amount');
  const held = reversals.filter((r) => r.status === 'pending').reduce((total, r) => total.plus(r.payout_amount!), new Money(0));
  assert.equal(balance(w, pending(PAYEE, w.transfer.payout_currency)), held.toFixed(), 'the payee holds the parts of its pending returns');
}

describe('returns decided by the ledger', () => {
  it('refuses in order of precedence, and moves nothing when it does', () => {
    const w = world('50.00');
    const refusals: Array<[string, () => Decision]> = [
      ['transfer_not_found', () => reverse(w, '1.00', PAYEE)],
      ['transfer_not_reversible', () => reverse({ ...w, transfer: { ...w.transfer, status: 'failed' } }, '1.00')],
      ['reversal_exceeded', () => reverse(w, '50.01')],
      ['insufficient_funds', () => reverse({ ...w, book: world('1.00').book }, '50.00')],
    ];
    for (const [expected, decide] of refusals) {
      const before = w.refs.map((ref) => balance(w, ref));
      const decision = decide();
      assert.equal(code(decision), expected);
      assert.deepEqual([decision.entries, partnerCommandOf(decision), w.refs.map((ref) => balance(w, ref))], [[], null, before]);
    }
  });

  it('holds the payee\'s part, asks the partner, and on its answer settles or releases it once', () => {
    const w = world('50.00');
    const asked = reverse(w, '20.00');
    const reversal = w.transfer.reversals![0];
    assert.deepEqual([reversal.status, w.transfer.reversed_amount, partnerCommandOf(asked)?.type, partnerCommandOf(asked)?.payload.amount], ['pending', '20', 'transfer.return', reversal.payout_amount]);
    assert.equal(balance(w, pending(PAYEE, 'EUR')), reversal.payout_amount);
    const completed = answer(w, reversal.id, 'completed');
    assert.deepEqual(completed.events.map((e) => e.type), ['transfer.reversed', 'balance.updated', 'balance.updated']);
    assert.deepEqual(completed.entries.map((e) => [e.entry.kind, e.entry.id]), [['return_settle', reversal.id]]);
    assert.equal(balance(w, available(SENDER, 'USD')), '20');
    for (const again of [answer(w, reversal.id, 'completed'), answer(w, reversal.id, 'failed')]) assert.deepEqual([again.entries, again.events], [[], []], 'an answer after the end changes nothing');
    const declined = reverse(w, null);
    const failed = answer(w, w.transfer.reversals![1].id, 'failed');
    assert.ok(partnerCommandOf(declined));
    assert.deepEqual(failed.events.map((e) => e.type), ['reversal.failed', 'balance.updated']);
    assert.deepEqual([w.transfer.reversed_amount, balance(w, pending(PAYEE, 'EUR'))], ['20', '0']);
    assertInvariants(w);
  });

  for (const seed of seeds([9, 610])) {
    it(`keeps the invariants through a seeded walk of returns asked, answered, repeated and late; in full, every leg is undone (seed ${seed}, ${replayOf(seed)})`, () => namingSeed(seed, () => {
      const random = prng(seed);
      const amount = new Money(100 + Math.floor(random() * 100_000)).dividedBy(100);
      const w = world(amount.toFixed(2), random() < 0.5 ? 'EUR' : 'GBP');
      const to = w.transfer.payout_currency;
      for (let step = 0; step < 200; step++) {
        const roll = random();
        const open = (w.transfer.reversals ?? []).filter((r) => r.status === 'pending');
        const decided = (w.transfer.reversals ?? []).filter((r) => r.status !== 'pending');
        if (roll < 0.45) {
          const left = amount.minus(w.transfer.reversed_amount!);
          const asked = random() < 0.2 ? null : new Money(1 + Math.floor(random() * 2_000)).dividedBy(100);
          const decision = reverse(w, asked === null ? null : asked.toFixed(2));
          if (left.isZero() || (asked !== null && asked.isGreaterThan(left))) assert.equal(code(decision), 'reversal_exceeded', `step ${step}`);
          else assert.equal(code(decision), 'transfer', `step ${step}: ${JSON.stringify(decision.outcome)}`);
        } else if (roll < 0.9 && open.length > 0) {
          answer(w, open[Math.floor(random() * open.length)].id, random() < 0.7 ? 'completed' : 'failed');
        } else if (decided.length > 0) {
          const late = answer(w, decided[Math.floor(random() * decided.length)].id, random() < 0.5 ? 'completed' : 'failed');
          assert.deepEqual([late.entries, late.events], [[], []], `step ${step}: a late answer changes nothing`);
        }
        assertInvariants(w);
      }
      for (const r of (w.transfer.reversals ?? []).filter((x) => x.status === 'pending')) answer(w, r.id, 'completed');
      if (!new Money(w.transfer.reversed_amount!).isEqualTo(amount)) {
        assert.equal(code(reverse(w, null)), 'transfer', 'all that is left');
        const last = w.transfer.reversals!.at(-1)!;
        if (last.status === 'pending') answer(w, last.id, 'completed');
      }
      assertInvariants(w);
      // Returned in full: every leg of the settlement undone, the sender whole, the desk where it was before the transfer.
      const after = Object.fromEntries(w.refs.map((ref) => [ref.code, balance(w, ref)]));
      assert.deepEqual([after[available(SENDER, 'USD').code], after[available(PAYEE, to).code], after[pending(PAYEE, to).code]], [amount.toFixed(), '0', '0']);
      for (const ref of [fxPosition('USD'), fxPosition(to), fxSpread(to)]) assert.equal(after[ref.code], '0', `${ref.code} is back where it was`);
    }));
  }
});
