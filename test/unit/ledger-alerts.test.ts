// The ledger's balance alert decision (ledger/alerts.ts), posting by posting: a crossing is a
// posting that takes the watched available balance from within the threshold to beyond it, also
// several in one round (back and forth within one batch of entries); nothing on other balances,
// other currencies, another wallet, or while the balance stays beyond; a seeded random walk
// against a model of the sequence.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { thresholdCrossings, type BalanceAlertRecord } from '../../ledger/alerts';
import { BalanceBook } from '../../ledger/balances';
import { available, faucetEquity, pending, walletAvailable, type LedgerAccountRef } from '../../ledger/chart';
import { entry } from '../../ledger/postings';
import { Money, type Amount } from '../../ledger/money';
import { prng } from '../support/prng';

const owner = randomUUID();
const walletId = randomUUID();
const refs: LedgerAccountRef[] = [faucetEquity('USD'), faucetEquity('EUR'), available(owner, 'USD'), available(owner, 'EUR'), pending(owner, 'USD'), walletAvailable(walletId, owner, 'USD')];
const book = () => new BalanceBook(refs.map((ref) => ({ id: randomUUID(), ref, balance: new Money(0) })));
const alert = (direction: 'below' | 'above', threshold: string, wallet: string | null = null, currency: 'USD' | 'EUR' = 'USD'): BalanceAlertRecord => (
  { id: randomUUID(), account_id: owner, wallet_id: wallet, currency, direction, threshold });

/** Moves `amount` (signed) between the faucet and `to`, as one entry applied to `balances`. */
function move(balances: BalanceBook, to: LedgerAccountRef, amount: string) {
  const draft = entry(randomUUID(), 'faucet_credit', {}, [{ account: faucetEquity(to.currency), amount: new Money(amount).negated() }, { account: to, amount: new Money(amount) }]);
  return { entry: draft, postings: balances.apply(draft) };
}

describe('balance alerts in the ledger', () => {
  it('fires on each crossing of one round, never while the balance stays beyond', () => {
    const balances = book();
    const below = alert('below', '50');
    const above = alert('above', '80');
    const main = available(owner, 'USD');
    const round = ['100', '-30', '-30', '-10', '15', '40', '5', '-45'].map((amount) => move(balances, main, amount));
    const events = thresholdCrossings([below, above], round);
    assert.deepEqual(events.map((e) => [e.resourceId, e.attributes!.balance_before, e.attributes!.balance_after]), [
      [above, '0.00', '100.00'], [below, '70.00', '40.00'], [above, '45.00', '85.00'], [below, '90.00', '45.00'],
    ].map(([a, before, after]) => [(a as BalanceAlertRecord).id, before, after]));
    assert.deepEqual(events.map((e) => e.attributes!.entry_id), [round[0], round[2], round[5], round[7]].map((r) => r.entry.id), 'each names the entry that crossed');
    assert.ok(events.every((e) => e.type === 'balance.threshold_crossed' && e.accountId === owner && e.resourceType === 'balance_alert'));
  });

  it('watches only its balance: its currency, its wallet or the main balance, the available figure', () => {
    const balances = book();
    const mainAlert = alert('above', '5');
    const walletAlert = alert('above', '5', walletId);
    const euroAlert = alert('above', '5', null, 'EUR');
    const round = [move(balances, pending(owner, 'USD'), '10'), move(balances, walletAvailable(walletId, owner, 'USD'), '10'), move(balances, available(owner, 'EUR'), '10')];
    const events = thresholdCrossings([mainAlert, walletAlert, euroAlert], round);
    assert.deepEqual(events.map((e) => [e.resourceId, e.attributes!.wallet_id, e.currency]), [[walletAlert.id, walletId, 'USD'], [euroAlert.id, 'main', 'EUR']]);
  });

  it('agrees with a model of the sequence over a seeded random walk', () => {
    const random = prng(4343);
    const balances = book();
    const main = available(owner, 'USD');
    const alerts = [alert('below', '40'), alert('above', '60'), alert('below', '10.50')];
    let balance: Amount = new Money(0);
    const expected: string[] = [];
    const round = [];
    for (let step = 0; step < 2_000; step += 1) {
      const cents = Math.floor(random() * 2_000) - 1_000;
      const amount = new Money(cents).dividedBy(100);
      if (amount.isZero() || balance.plus(amount).isNegative()) continue;
      const before = balance;
      balance = balance.plus(amount);
      for (const a of alerts) {
        const beyond = (v: Amount) => (a.direction === 'below' ? v.isLessThan(a.threshold) : v.isGreaterThan(a.threshold));
        if (!beyond(before) && beyond(balance)) expected.push(`${a.id} ${before.toFixed(2)} ${balance.toFixed(2)}`);
      }
      round.push(move(balances, main, amount.toFixed()));
    }
    const got = thresholdCrossings(alerts, round).map((e) => `${e.resourceId} ${e.attributes!.balance_before} ${e.attributes!.balance_after}`);
    assert.ok(expected.length > 20, `the walk crossed often (${expected.length})`);
    assert.deepEqual(got, expected);
  });
});
