// Invariants that only a bug can break. They are asserted before a write (here) and enforced
// again by Postgres (balance trigger, non-negative CHECK, the holds' and reversals' checks) when
// it is written.
import assert from 'node:assert/strict';
import type { LedgerAccountState } from './balances';
import type { EntryDraft } from './entry';
import type { HoldRecord } from './holds';
import { Money } from './money';
import type { TransferRecord } from './transfers';

export function assertEntryBalances(entry: EntryDraft): void {
  assert.ok(entry.postings.length >= 2, `entry ${entry.id} has fewer than two postings`);
  const totals = new Map<string, InstanceType<typeof Money>>();
  for (const posting of entry.postings) {
    assert.ok(!posting.amount.isZero(), `entry ${entry.id} has a zero posting`);
    const currency = posting.account.currency;
    totals.set(currency, (totals.get(currency) ?? new Money(0)).plus(posting.amount));
  }
  for (const [currency, total] of totals) {
    assert.ok(total.isZero(), `entry ${entry.id} does not balance in ${currency}: ${total.toFixed()}`);
  }
}

/** What a round is about to write: the balances it changed, the holds and transfers it writes. */
export interface RoundWritten {
  balances: LedgerAccountState[];
  holds: HoldRecord[];
  transfers: TransferRecord[];
}

/**
 * The round's write, checked whole before it goes to Postgres, which checks the same at commit (each
 * entry's balance is asserted as it is drafted, assertEntryBalances): no customer balance is below zero, what a hold
 * took is captured, released or still held and never more (it is active exactly while some is
 * left), and a transfer's reversals never give back more than it moved.
 */
export function assertRoundWritable({ balances, holds, transfers }: RoundWritten): void {
  for (const { ref, balance } of balances) assert.ok(ref.kind === 'system' || !balance.isNegative(), `ledger account ${ref.code} would be written below zero`);
  for (const hold of holds) {
    const taken = new Money(hold.captured_amount).plus(hold.released_amount);
    assert.ok(new Money(hold.amount).isGreaterThan(0) && taken.isLessThanOrEqualTo(hold.amount), `hold ${hold.id} gives out more than it took`);
    assert.equal(hold.status === 'active', taken.isLessThan(hold.amount), `hold ${hold.id} is ${hold.status} with ${new Money(hold.amount).minus(taken).toFixed()} left`);
  }
  for (const transfer of transfers) {
    assert.ok(new Money(transfer.reversed_amount ?? 0).isLessThanOrEqualTo(transfer.amount), `transfer ${transfer.id} reversed beyond its amount`);
  }
}
