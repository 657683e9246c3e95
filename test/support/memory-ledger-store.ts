// The ledger's store port (ledger/ports.ts) held in memory, so the round and the commands'
// decisions run in the unit suite. It keeps what the Postgres store guarantees that a round can
// observe: rounds one at a time (Postgres serialises rounds on their locks), a round that throws
// leaves nothing, every entry balances per currency (Postgres's postings trigger), no customer
// balance below zero (its check), a transfer's reversals within its amount (its check). The
// integration suite runs the same round on Postgres (ledger-store, ledger-invariants).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { BalanceAlertRecord } from '../../ledger/alerts';
import type { LedgerAccountState } from '../../ledger/balances';
import type { LedgerAccountRef } from '../../ledger/chart';
import type { FxQuoteRecord } from '../../ledger/fx-quotes';
import type { HoldRecord } from '../../ledger/holds';
import { Money, type Amount } from '../../ledger/money';
import type { PaymentRecord } from '../../ledger/payments';
import type { AccountFacts } from '../../ledger/commands/facts';
import { canonicalEmail } from '../../ledger/emails';
import type { BatchWrite, EntryWrite, FactsRequest, Gathered, KnownCommand, LedgerStore, Locked, LockRequest, RoundTransaction } from '../../ledger/ports';
import type { TransferRecord } from '../../ledger/transfers';
import type { WalletRecord } from '../../ledger/wallets';

const copy = <T>(record: T): T => structuredClone(record);
const pick = <T>(table: Map<string, T>, ids: string[] | undefined): Map<string, T> =>
  new Map((ids ?? []).flatMap((id) => (table.has(id) ? [[id, copy(table.get(id)!)] as const] : [])));

export class MemoryLedgerStore implements LedgerStore {
  readonly accounts = new Map<string, LedgerAccountState>();
  readonly transfers = new Map<string, TransferRecord>();
  readonly quotes = new Map<string, FxQuoteRecord>();
  readonly payments = new Map<string, PaymentRecord>();
  readonly wallets = new Map<string, WalletRecord>();
  readonly holds = new Map<string, HoldRecord>();
  readonly alerts: BalanceAlertRecord[] = [];
  readonly entries: EntryWrite[] = [];
  /** Each decided command's outcome JSON, by command id (processed_commands). */
  readonly processed = new Map<string, string>();
  readonly published: string[] = [];
  /** The customer accounts the ledger may find, by id and by email; those on a test clock with its time. */
  readonly customers = new Map<string, { facts: AccountFacts; email: string }>();
  readonly clockTimes = new Map<string, Date>();
  private queue: Promise<unknown> = Promise.resolve();

  async ensureAccounts(refs: LedgerAccountRef[]): Promise<void> {
    for (const ref of refs) if (!this.accounts.has(ref.code)) this.accounts.set(ref.code, { id: randomUUID(), ref, balance: new Money(0) });
  }

  inRound<T>(work: (round: RoundTransaction) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => work(this.transaction()));
    this.queue = run.catch(() => undefined);
    return run;
  }

  balance(code: string): string {
    return (this.accounts.get(code)?.balance ?? new Money(0)).toFixed();
  }

  private transaction(): RoundTransaction {
    return {
      gather: async (request: FactsRequest): Promise<Gathered> => this.gather(request),
      lock: async (request: LockRequest): Promise<Locked> => ({
        transfers: pick(this.transfers, request.transferIds), quotes: pick(this.quotes, request.quoteIds), payments: pick(this.payments, request.paymentIds),
        wallets: pick(this.wallets, request.walletIds), holds: pick(this.holds, request.holdIds),
        balances: [...new Set(request.refs.map((r) => r.code))].flatMap((code) => (this.accounts.has(code) ? [{ ...this.accounts.get(code)! }] : [])),
        alerts: this.alerts.filter((a) => request.alertAccountIds?.includes(a.account_id)).map(copy),
      }),
      commit: async (write: BatchWrite, publishedRounds: string[]) => this.apply(write, publishedRounds),
    };
  }

  /** What Postgres's gather reads, from what this store holds (no bank details, no faucet credits of earlier days' rounds). */
  private gather(request: FactsRequest): Gathered {
    const known = new Map<string, KnownCommand>(request.commands.map(({ id }) => [id, {
      decided: this.processed.has(id) ? { outcome: this.processed.get(id)!, fingerprint: null } : null, keyHeldByApi: false,
    }]));
    const customers = [...this.customers.values()];
    const emails = new Set(request.emails.map(canonicalEmail));
    return {
      known,
      facts: {
        accountsById: new Map(request.senders.flatMap((id) => (this.customers.has(id) ? [[id, this.customers.get(id)!.facts] as const] : []))),
        accountsByEmail: new Map(customers.filter((c) => emails.has(canonicalEmail(c.email))).map((c) => [canonicalEmail(c.email), c.facts])),
        accountsByBank: new Map(),
        clockTimes: new Map(request.commands.flatMap((c) => (this.clockTimes.has(c.accountId) ? [[c.accountId, this.clockTimes.get(c.accountId)!] as const] : []))),
        faucetToday: new Map(),
        transfers: pick(this.transfers, request.transfers), quotes: pick(this.quotes, request.quotes), payments: pick(this.payments, request.payments),
        wallets: pick(this.wallets, request.wallets), holds: pick(this.holds, request.holds),
      },
    };
  }

  /** Checks the whole write first, as Postgres does at the end of its statement, then keeps it. */
  private apply(write: BatchWrite, publishedRounds: string[]): void {
    for (const entry of write.entries) {
      const sums = new Map<string, Amount>();
      for (const posting of entry.postings) sums.set(posting.ref.currency, (sums.get(posting.ref.currency) ?? new Money(0)).plus(posting.amount));
      for (const [currency, sum] of sums) assert.ok(sum.isZero(), `entry ${entry.id} (${entry.kind}) does not balance in ${currency}: ${sum.toFixed()}`);
    }
    for (const state of write.balances) {
      assert.ok(this.accounts.has(state.ref.code), `ledger account ${state.ref.code} was never made`);
      assert.ok(state.ref.kind === 'system' || !state.balance.isNegative(), `ledger account ${state.ref.code} below zero`);
    }
    for (const transfer of [...write.newTransfers, ...write.changedTransfers]) {
      assert.ok(new Money(transfer.reversed_amount ?? 0).isLessThanOrEqualTo(transfer.amount), `transfer ${transfer.id} reversed beyond its amount`);
    }
    for (const transfer of write.newTransfers) assert.ok(!this.transfers.has(transfer.id), `transfer ${transfer.id} inserted twice`);
    for (const { commandId } of write.processed) assert.ok(!this.processed.has(commandId), `command ${commandId} decided twice`);
    for (const state of write.balances) this.accounts.set(state.ref.code, { ...state });
    for (const transfer of [...write.newTransfers, ...write.changedTransfers]) this.transfers.set(transfer.id, copy(transfer));
    for (const quote of write.consumedQuotes) this.quotes.set(quote.id, copy(quote));
    for (const payment of [...write.newPayments, ...write.changedPayments]) this.payments.set(payment.id, copy(payment));
    for (const hold of [...write.newHolds ?? [], ...write.changedHolds ?? []]) this.holds.set(hold.id, copy(hold));
    for (const { commandId, outcome } of write.processed) this.processed.set(commandId, outcome);
    this.entries.push(...write.entries);
    this.published.push(...publishedRounds);
  }
}
