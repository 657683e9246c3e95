// A round of the ledger, in one transaction of its store (ports.ts; Postgres in ledger/store/):
// lock the records its commands name and read its facts after them, once; lock the ledger
// accounts the commands post to; decide each command in order by its module (ledger/commands);
// write everything they change (entries, balances, records, processed commands and the outbox
// round). A command decided before is not decided again: its answer is the stored one.
// The consumer (consumers/ledger) reads Kafka, calls this, and answers and publishes once it
// committed; how an outbox row is shaped for Kafka is its business (OutboxRows).
import { randomUUID } from 'node:crypto';
import { thresholdCrossings } from './alerts';
import { BalanceBook } from './balances';
import { held, type LedgerAccountRef } from './chart';
import { wallNow } from './clock';
import { needsOf, type BatchFacts, type Locked, type ParsedCommand } from './commands';
import { emptyDecision, type Decision, type EventDraft } from './decision';
import type { HoldRecord } from './holds';
import type { PartnerInstruction } from './messages';
import type { PaymentRecord } from './payments';
import { shown } from './outcome';
import { isCanonicalUuid, unstorable } from './screen';
import type { BatchWrite, CommandRef, EntryWrite, KnownCommand, LedgerStore, OutboxWrite, RoundTransaction } from './ports';
import type { TransferRecord } from './transfers';

/** How the round's messages become outbox rows (their topics and envelopes are the publisher's). */
export interface OutboxRows {
  event(event: EventDraft, now: Date): OutboxWrite;
  entry(entry: EntryWrite, now: Date): OutboxWrite;
  partnerCommand(partner: string, accountId: string, instruction: PartnerInstruction, now: Date): OutboxWrite;
}

export interface RoundSettings {
  rows: OutboxRows;
  /** Told each new hold's expiry once its round committed (the hold expiry's next sweep). */
  holdsDue?: (expiresAt: Date) => void;
  /** The server's bound on each statement of a round (store/round-transaction.ts); none: the default. Tests shorten it. */
  statementTimeoutMs?: number;
}

export interface RoundOutcome {
  /** What the store knew of each command as the round began: decided before, or its key held by the API. */
  known: Map<string, KnownCommand>;
  /** Each command decided in this round: its outcome JSON text, by command id. */
  outcomes: Map<string, string>;
  /** The round's outbox, when it wrote one: none when every command was decided before. */
  written: { roundId: string; outbox: BatchWrite['outbox'] } | null;
}

/** The command type as recorded: what the message said, when that can be stored. */
const storableType = (type: unknown): string => (typeof type === 'string' && !unstorable(type) ? type.slice(0, 100) : 'unknown');

/** A command decided by its module (ledger/commands), or refused as it is. */
function decide(command: ParsedCommand, facts: BatchFacts, locked: Locked, book: BalanceBook, now: Date): Decision {
  if (command.type === 'refused') return emptyDecision(command.refusal);
  const { envelope, payload } = command;
  return command.command.decide({ commandId: envelope.id, accountId: envelope.account_id, payload, facts, locked, book, now });
}

/** Ledger accounts a round posts to that do not exist yet: made outside the round, which then runs again. */
class AccountsMissing extends Error {
  constructor(readonly refs: LedgerAccountRef[]) {
    super(`ledger accounts missing: ${refs.map((r) => r.code).join(', ')}`);
  }
}

/** How the store finds a command's earlier answer; a refused command's account and key may be unstorable. */
const refOf = ({ envelope, type }: ParsedCommand): CommandRef => (type === 'refused'
  ? { id: envelope.id, accountId: '', idempotencyKey: null } // only its own earlier answer matters
  : { id: envelope.id, accountId: envelope.account_id, idempotencyKey: envelope.idempotency_key ?? null });

/** Whether a command is decided now: not decided before, and its key not held by another route's request. */
const isFresh = (known: KnownCommand | undefined) => !known || (known.decided === null && !known.keyHeldByApi);

/** The wallets the transfers of partner results came from: an answer may give the money back to one. */
const walletIdsOfTransfers = (facts: BatchFacts): string[] =>
  [...facts.transfers.values()].flatMap((t) => (t.from_wallet_id === null || facts.wallets.has(t.from_wallet_id) ? [] : [t.from_wallet_id]));

/**
 * The held account of each main balance a round names, for its balance events' `amount`
 * (available + held + pending): locked with the others when it exists, never created (an account
 * that never held anything has none, and holds nothing).
 */
function heldBeside(refs: LedgerAccountRef[]): LedgerAccountRef[] {
  const named = new Set(refs.map((r) => r.code));
  const beside = refs.flatMap((r) => (r.kind === 'available' && r.accountId ? [held(r.accountId, r.currency)] : []));
  return [...new Map(beside.filter((r) => !named.has(r.code)).map((r) => [r.code, r])).values()];
}

/** The accounts with an available balance among a round's ledger accounts: their balance alerts may fire. */
const alertAccountsOf = (refs: LedgerAccountRef[]) => [...new Set(refs.flatMap((r) => ((r.kind === 'available' || r.kind === 'wallet_available') && r.accountId ? [r.accountId] : [])))];

/**
 * Decides and writes a round of `commands` (each decided once, whatever the batch repeats);
 * `publishedRounds` are marked published in its transaction. A ledger account the round needs that
 * does not exist yet is made outside its transaction (a lock held while inserting could wait on
 * another round's insert), and the round runs again, once: ledger accounts are never deleted.
 */
export async function runRound(store: LedgerStore, settings: RoundSettings, commands: ParsedCommand[], publishedRounds: string[]): Promise<RoundOutcome> {
  try {
    return await store.inRound((round) => decideRound(round, settings, commands, publishedRounds), settings.statementTimeoutMs);
  } catch (error) {
    if (!(error instanceof AccountsMissing)) throw error;
    await store.ensureAccounts(error.refs);
    return store.inRound((round) => decideRound(round, settings, commands, publishedRounds), settings.statementTimeoutMs);
  }
}

async function decideRound(round: RoundTransaction, settings: RoundSettings, all: ParsedCommand[], publishedRounds: string[]): Promise<RoundOutcome> {
  const { known, facts } = await round.gather({ ...needsOf(all), commands: all.map(refOf) });
  const commands = all.filter((c) => isFresh(known.get(c.envelope.id)));
  if (commands.length === 0) return { known, outcomes: new Map(), written: null };
  const refs = commands.flatMap((c) => (c.type === 'refused' ? [] : c.command.accounts(c.payload, c.envelope.account_id, facts)));
  const locked = await round.lock({ walletIds: walletIdsOfTransfers(facts), refs: [...refs, ...heldBeside(refs)], alertAccountIds: alertAccountsOf(refs) });
  const found = new Set(locked.balances.map((b) => b.ref.code));
  const missing = refs.filter((r) => !found.has(r.code));
  if (missing.length > 0) throw new AccountsMissing([...new Map(missing.map((r) => [r.code, r])).values()]);
  const { balances, alerts } = locked;
  // The records as the round's commands change them, one after another; facts keeps them as locked.
  const transfers = new Map(facts.transfers);
  const quotes = new Map(facts.quotes);
  const payments = new Map(facts.payments);
  const holds = new Map(facts.holds);
  const wallets = new Map([...facts.wallets, ...locked.wallets]);
  const { rows } = settings;
  const book = new BalanceBook(balances);
  // The round's time: its entries', and every command's whose account is on no test clock.
  const now = wallNow();
  // A command of an account on a test clock is decided at the clock's time (DESIGN.md section 5i):
  // its records, status changes and events carry it, as they would have at that instant.
  const nowOf = (command: ParsedCommand): Date => facts.clockTimes.get(command.envelope.account_id) ?? now;
  const roundId = randomUUID();
  const write: BatchWrite = {
    entries: [], balances: [], newTransfers: [], changedTransfers: [], transitions: [], consumedQuotes: [],
    newPayments: [], changedPayments: [], paymentTransitions: [], processed: [], outbox: [], lateCompletions: [], newHolds: [], changedHolds: [], roundId, now,
  };
  const outcomes = new Map<string, string>();
  const changed = new Map<string, TransferRecord>();
  // A payment created in this batch is inserted once, in its latest state; others are updated.
  const createdPayments = new Set<string>();
  const faucetToday = new Map(facts.faucetToday);
  const changedPayments = new Map<string, PaymentRecord>();
  // Holds likewise: one created in this batch is inserted once, in its latest state.
  const createdHolds = new Set<string>();
  const changedHolds = new Map<string, HoldRecord>();
  const absorb = (command: ParsedCommand, decision: Decision, at: Date): void => {
    // A batch's transfers are written as if each were a command of its own.
    for (const part of decision.parts ?? []) absorb(command, part, at);
    for (const { entry, postings } of decision.entries) {
      const applied: EntryWrite = {
        id: entry.id, kind: entry.kind, commandId: command.envelope.id, transferId: entry.transferId, quoteId: entry.quoteId, paymentId: entry.paymentId, postings,
      };
      write.entries.push(applied);
      write.outbox.push(rows.entry(applied, now));
    }
    write.outbox.push(...thresholdCrossings(alerts, decision.entries).map((e) => rows.event(e, at)));
    write.outbox.push(...decision.events.map((e) => rows.event(e, at)));
    for (const change of decision.changes) {
      switch (change.kind) {
        case 'transfer':
          if (change.isNew) write.newTransfers.push(change.transfer);
          else changed.set(change.transfer.id, change.transfer);
          transfers.set(change.transfer.id, change.transfer);
          break;
        case 'transfer_transition': {
          const { transferId, from, to, at } = change;
          write.transitions.push({ transferId, from, to, at });
          break;
        }
        case 'payment':
          if (change.isNew) createdPayments.add(change.payment.id);
          else if (!createdPayments.has(change.payment.id)) changedPayments.set(change.payment.id, change.payment);
          payments.set(change.payment.id, change.payment);
          break;
        case 'payment_transition': {
          const { paymentId, from, to, at } = change;
          write.paymentTransitions.push({ paymentId, from, to, at });
          break;
        }
        case 'hold':
          if (change.isNew) createdHolds.add(change.hold.id);
          else if (!createdHolds.has(change.hold.id)) changedHolds.set(change.hold.id, change.hold);
          holds.set(change.hold.id, change.hold);
          break;
        case 'quote_consumed':
          write.consumedQuotes.push(change.quote);
          quotes.set(change.quote.id, change.quote);
          break;
        case 'late_completion':
          write.lateCompletions.push(change.exception);
          break;
        case 'partner_instruction': {
          const { kind: _kind, partner, accountId, ...instruction } = change;
          write.outbox.push(rows.partnerCommand(partner, accountId, instruction as PartnerInstruction, at));
          break;
        }
      }
    }
  };
  for (const command of commands) {
    const at = nowOf(command);
    const decision = decide(command, facts, { transfers, quotes, payments, faucetToday, wallets, holds }, book, at);
    absorb(command, decision, at);
    const outcome = JSON.stringify(shown(decision.outcome));
    const { envelope } = command;
    // A refused command keeps its key's record only when its account and key can be stored.
    const keyed = Boolean(envelope.idempotency_key) && (command.type !== 'refused' || (isCanonicalUuid(envelope.account_id) && command.refusal.field !== 'idempotency_key' && command.refusal.field !== 'fingerprint'));
    write.processed.push({
      commandId: envelope.id, type: command.type === 'refused' ? storableType(envelope.type) : command.type, outcome,
      accountId: keyed ? envelope.account_id : null, idempotencyKey: keyed ? envelope.idempotency_key! : null, fingerprint: keyed ? envelope.fingerprint ?? null : null,
    });
    outcomes.set(envelope.id, outcome);
  }
  write.changedTransfers = [...changed.values()];
  write.newPayments = [...createdPayments].map((id) => payments.get(id)!);
  write.changedPayments = [...changedPayments.values()];
  write.newHolds = [...createdHolds].map((id) => holds.get(id)!);
  write.changedHolds = [...changedHolds.values()];
  write.balances = book.changedAccounts();
  await round.commit(write, publishedRounds);
  // A hold on a test clock expires as its clock advances, not by the wall's sweep.
  for (const hold of write.newHolds) if (!facts.clockTimes.has(hold.account_id)) settings.holdsDue?.(hold.expires_at);
  return { known, outcomes, written: { roundId, outbox: write.outbox } };
}
