// The balances a ledger batch works on: loaded (and locked) once per batch, updated in memory
// as each command is decided, then written back in one statement.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LedgerAccountRef } from './chart';
import type { EntryDraft } from './entry';
import { Money, type Amount } from './money';

export interface LedgerAccountState {
  id: string;
  ref: LedgerAccountRef;
  balance: Amount;
}

export interface AppliedPosting {
  /** The posting's id, fixed when it is decided: on an available account it is a transaction's id. */
  id: string;
  ledgerAccountId: string;
  ref: LedgerAccountRef;
  amount: Amount;
  balanceAfter: Amount;
}

export class BalanceBook {
  private readonly accounts = new Map<string, LedgerAccountState>();
  private readonly changed = new Set<string>();

  constructor(states: LedgerAccountState[]) {
    for (const state of states) this.accounts.set(state.ref.code, state);
  }

  balance(ref: LedgerAccountRef): Amount {
    return this.accounts.get(ref.code)?.balance ?? new Money(0);
  }

  /** Applies an entry; a customer balance below zero is a bug in the caller's checks. */
  apply(entry: EntryDraft): AppliedPosting[] {
    return entry.postings.map((posting) => {
      const state = this.accounts.get(posting.account.code);
      assert.ok(state, `ledger account ${posting.account.code} was not loaded for this batch`);
      state.balance = state.balance.plus(posting.amount);
      if (state.ref.kind !== 'system') {
        assert.ok(!state.balance.isNegative(), `ledger account ${state.ref.code} would go below zero`);
      }
      this.changed.add(state.ref.code);
      return { id: randomUUID(), ledgerAccountId: state.id, ref: state.ref, amount: posting.amount, balanceAfter: state.balance };
    });
  }

  /**
   * Remembers the balances as they are now; the function returned puts them back, so a decision
   * that applied entries and then gave up (an atomic batch with a refused item) leaves no trace.
   */
  checkpoint(): () => void {
    const balances = new Map([...this.accounts].map(([code, state]) => [code, state.balance]));
    const changed = new Set(this.changed);
    return () => {
      for (const [code, balance] of balances) this.accounts.get(code)!.balance = balance;
      this.changed.clear();
      for (const code of changed) this.changed.add(code);
    };
  }

  changedAccounts(): LedgerAccountState[] {
    return [...this.changed].map((code) => this.accounts.get(code)!);
  }
}
