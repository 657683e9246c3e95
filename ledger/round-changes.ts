// What a round's decisions change, kept in the order they were decided for the round's one write
// (ports.ts BatchWrite): each decision's entries, events and partner instructions as outbox rows,
// and the records as the round's commands change them one after another, which the next command
// decides on (commands/facts.ts Locked). A record created in the round is inserted once, in its
// latest state; one changed is updated once, as the round left it. round.ts applies each decision here.
import type { BalanceAlertRecord } from './alerts';
import { thresholdCrossings } from './alerts';
import type { BalanceBook } from './balances';
import type { BatchFacts, Locked } from './commands';
import type { Decision, EventDraft, RecordChange } from './decision';
import type { HoldRecord } from './holds';
import type { PartnerInstruction } from './messages';
import type { PaymentRecord } from './payments';
import type { BatchWrite, EntryWrite, OutboxWrite } from './ports';
import type { TransferRecord } from './transfers';
import type { WalletRecord } from './wallets';

/** How the round's messages become outbox rows (their topics and envelopes are the publisher's). */
export interface OutboxRows {
  event(event: EventDraft, now: Date): OutboxWrite;
  entry(entry: EntryWrite, now: Date): OutboxWrite;
  partnerCommand(partner: string, accountId: string, instruction: PartnerInstruction, now: Date): OutboxWrite;
}

type Processed = BatchWrite['processed'][number];

export class RoundChanges {
  /** The records as the round's commands change them; the round's facts keep them as locked. */
  readonly records: Locked;
  private readonly write: BatchWrite;
  private readonly changedTransfers = new Map<string, TransferRecord>();
  private readonly createdPayments = new Set<string>();
  private readonly changedPayments = new Map<string, PaymentRecord>();
  private readonly createdHolds = new Set<string>();
  private readonly changedHolds = new Map<string, HoldRecord>();

  /** `lockedWallets`: the wallets the round locked beside its facts' (those partner results may give money back to). */
  constructor(private readonly rows: OutboxRows, private readonly alerts: BalanceAlertRecord[], facts: BatchFacts, lockedWallets: Map<string, WalletRecord>, roundId: string, private readonly now: Date) {
    this.records = {
      transfers: new Map(facts.transfers), quotes: new Map(facts.quotes), payments: new Map(facts.payments), holds: new Map(facts.holds),
      wallets: new Map([...facts.wallets, ...lockedWallets]), faucetToday: new Map(facts.faucetToday),
    };
    this.write = {
      entries: [], balances: [], newTransfers: [], changedTransfers: [], transitions: [], consumedQuotes: [],
      newPayments: [], changedPayments: [], paymentTransitions: [], processed: [], outbox: [], lateCompletions: [], newHolds: [], changedHolds: [], roundId, now,
    };
  }

  /** A command's decision, decided at `at`: a batch's transfers first, each as a command of its own, then its entries, the alerts they cross, its events and its record changes. */
  apply(commandId: string, decision: Decision, at: Date): void {
    for (const part of decision.parts ?? []) this.apply(commandId, part, at);
    for (const { entry, postings } of decision.entries) {
      const applied: EntryWrite = { id: entry.id, kind: entry.kind, commandId, transferId: entry.transferId, quoteId: entry.quoteId, paymentId: entry.paymentId, postings };
      this.write.entries.push(applied);
      this.write.outbox.push(this.rows.entry(applied, this.now));
    }
    this.write.outbox.push(...thresholdCrossings(this.alerts, decision.entries).map((e) => this.rows.event(e, at)));
    this.write.outbox.push(...decision.events.map((e) => this.rows.event(e, at)));
    for (const change of decision.changes) this.applyChange(change, at);
  }

  /** A command decided, with its outcome: its row in processed_commands. */
  processed(row: Processed): void {
    this.write.processed.push(row);
  }

  /** The round's write, once every command is decided: the records in their latest state, the balances `book` changed. */
  finish(book: BalanceBook): BatchWrite {
    const { payments, holds } = this.records;
    return {
      ...this.write,
      changedTransfers: [...this.changedTransfers.values()],
      newPayments: [...this.createdPayments].map((id) => payments.get(id)!),
      changedPayments: [...this.changedPayments.values()],
      newHolds: [...this.createdHolds].map((id) => holds.get(id)!),
      changedHolds: [...this.changedHolds.values()],
      balances: book.changedAccounts(),
    };
  }

  private applyChange(change: RecordChange, at: Date): void {
    const { write, records } = this;
    switch (change.kind) {
      case 'transfer':
        if (change.isNew) write.newTransfers.push(change.transfer);
        else this.changedTransfers.set(change.transfer.id, change.transfer);
        records.transfers.set(change.transfer.id, change.transfer);
        return;
      case 'transfer_transition':
        write.transitions.push({ transferId: change.transferId, from: change.from, to: change.to, at: change.at });
        return;
      case 'payment':
        if (change.isNew) this.createdPayments.add(change.payment.id);
        else if (!this.createdPayments.has(change.payment.id)) this.changedPayments.set(change.payment.id, change.payment);
        records.payments.set(change.payment.id, change.payment);
        return;
      case 'payment_transition':
        write.paymentTransitions.push({ paymentId: change.paymentId, from: change.from, to: change.to, at: change.at });
        return;
      case 'hold':
        if (change.isNew) this.createdHolds.add(change.hold.id);
        else if (!this.createdHolds.has(change.hold.id)) this.changedHolds.set(change.hold.id, change.hold);
        records.holds.set(change.hold.id, change.hold);
        return;
      case 'quote_consumed':
        write.consumedQuotes.push(change.quote);
        records.quotes.set(change.quote.id, change.quote);
        return;
      case 'late_completion':
        write.lateCompletions.push(change.exception);
        return;
      case 'partner_instruction': {
        const { kind: _kind, partner, accountId, ...instruction } = change;
        write.outbox.push(this.rows.partnerCommand(partner, accountId, instruction as PartnerInstruction, at));
      }
    }
  }
}
