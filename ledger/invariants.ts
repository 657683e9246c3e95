// Invariants that only a bug can break. They are asserted before a write (here) and enforced
// again by Postgres (balance trigger, non-negative CHECK) when it is written.
import assert from 'node:assert/strict';
import type { EntryDraft } from './entry';
import { Money } from './money';

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
