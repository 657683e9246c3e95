// The ledger consumer: the only writer of money (DESIGN.md section 3). A batch of commands is
// decided and written in one Postgres transaction (postings, balances, transfers, processed
// commands, outbox); offsets are committed by the runner only after this resolves. After commit
// the replies go out first, then the outbox. A command decided before changes nothing: each of
// its messages is answered with the stored outcome, or, when the message is another request under
// the same Idempotency-Key, with a conflict (DESIGN.md section 5f).
import { randomUUID } from 'node:crypto';
import { thresholdCrossings } from '../../ledger/alerts';
import { BalanceBook } from '../../ledger/balances';
import { type BatchFacts, type Locked } from '../../ledger/commands';
import { emptyDecision, type Decision } from '../../ledger/decide';
import type { HoldRecord } from '../../ledger/holds';
import type { PaymentRecord } from '../../ledger/payments';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { LedgerRound } from '../../ledger/round-transaction';
import { isCanonicalUuid, unstorable } from '../../ledger/screen';
import {
  accountFactsByBank, ensureLedgerAccounts, readPayments, readQuotes, readTransfers, readWallets, readHolds, roundFacts,
  faucetCreditedToday, type BatchWrite, type EntryWrite, type KnownCommand,
} from '../../ledger/store';
import { held, type LedgerAccountRef } from '../../ledger/chart';
import type { TransferRecord } from '../../ledger/transfers';
import type { Delivered } from '../../src/kafka/consumer';
import type { Runtime } from '../../src/runtime';
import { entryRow, eventRow, partnerCommandRow } from './outbox';
import type { RoundPublisher } from './publisher';
import { answerTo, conflictWith, type Reply, type ReplySender } from './replies';
import { needsOf, parseCommand, walletIdsOfTransfers, type ParsedCommand } from './plan';

/** The command type as recorded: what the message said, when that can be stored. */
const storableType = (type: unknown): string => (typeof type === 'string' && !unstorable(type) ? type.slice(0, 100) : 'unknown');

function uniqueCommands(messages: Delivered<LedgerCommandEnvelope>[]): ParsedCommand[] {
  const seen = new Set<string>();
  const commands: ParsedCommand[] = [];
  for (const message of messages) {
    if (seen.has(message.value.id)) continue;
    seen.add(message.value.id);
    commands.push(parseCommand(message.value));
  }
  return commands;
}

/** What the round knows before it locks: the commands decided before, the accounts' facts, the records named. */
async function gatherFacts(runtime: Runtime, commands: ParsedCommand[]): Promise<{ known: Map<string, KnownCommand>; facts: BatchFacts }> {
  const needs = needsOf(commands);
  const refs = commands.map(({ envelope, type }) => (type === 'refused'
    ? { id: envelope.id, accountId: '', idempotencyKey: null } // only its own earlier answer matters
    : { id: envelope.id, accountId: envelope.account_id, idempotencyKey: envelope.idempotency_key ?? null }));
  const [{ known, byId: accountsById, byEmail: accountsByEmail }, accountsByBank, transfers, quotes, payments, faucetToday, wallets, holds] = await Promise.all([
    roundFacts(runtime.db, refs, needs.senders, needs.emails),
    accountFactsByBank(runtime.db, needs.banks),
    readTransfers(runtime.db, needs.transfers),
    readQuotes(runtime.db, needs.quotes),
    readPayments(runtime.db, needs.payments),
    faucetCreditedToday(runtime.db, needs.faucets),
    readWallets(runtime.db, needs.wallets),
    readHolds(runtime.db, needs.holds),
  ]);
  // Read once the transfers are known: rare (a payout from a wallet), so the common round waits for nothing more.
  for (const [id, wallet] of await readWallets(runtime.db, walletIdsOfTransfers(transfers).filter((id) => !wallets.has(id)))) wallets.set(id, wallet);
  return { known, facts: { accountsById, accountsByEmail, accountsByBank, transfers, quotes, payments, faucetToday, wallets, holds } };
}

/** A command decided by its module (ledger/commands), or refused as it is. */
function decide(command: ParsedCommand, facts: BatchFacts, locked: Locked, book: BalanceBook, now: Date): Decision {
  if (command.type === 'refused') return emptyDecision(command.refusal);
  const { envelope, payload } = command;
  return command.command.decide({ commandId: envelope.id, accountId: envelope.account_id, payload, facts, locked, book, now });
}

interface BatchOutcome {
  /** Each decided command's outcome JSON text, by command id. */
  outcomes: Map<string, string>;
  roundId: string;
  outbox: BatchWrite['outbox'];
}

/** What the ledger keeps between rounds. */
export interface LedgerState {
  publisher: RoundPublisher;
  replies: ReplySender;
  /** Codes of ledger accounts known to exist (they are never deleted): no insert is tried for them. */
  knownLedgerAccounts: Set<string>;
  /** Told each new hold's expiry once its round committed (the hold expiry's next sweep). */
  holdsDue?: (expiresAt: Date) => void;
  /** The server's bound on each statement of a round (ledger/round-transaction.ts); none: the default. Tests shorten it. */
  statementTimeoutMs?: number;
}

const KNOWN_LEDGER_ACCOUNTS_MAX = 200_000;

/** Creates the ledger accounts this round needs that were not seen before. */
async function ensureAccounts(runtime: Runtime, state: LedgerState, refs: LedgerAccountRef[]): Promise<void> {
  const unseen = refs.filter((r) => !state.knownLedgerAccounts.has(r.code));
  if (unseen.length === 0) return;
  await ensureLedgerAccounts(runtime.db, unseen);
  if (state.knownLedgerAccounts.size > KNOWN_LEDGER_ACCOUNTS_MAX) state.knownLedgerAccounts.clear();
  for (const ref of unseen) state.knownLedgerAccounts.add(ref.code);
}

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

async function applyBatch(runtime: Runtime, state: LedgerState, commands: ParsedCommand[], facts: BatchFacts, publishedRounds: string[]): Promise<BatchOutcome> {
  const refs = commands.flatMap((c) => (c.type === 'refused' ? [] : c.command.accounts(c.payload, c.envelope.account_id, facts)));
  await ensureAccounts(runtime, state, refs);
  const environment = runtime.config.environment;
  return LedgerRound.run(runtime.db, async (round) => {
    const { transfers, quotes, payments, wallets, holds, balances, alerts } = await round.lock({
      transferIds: [...facts.transfers.keys()], quoteIds: [...facts.quotes.keys()], paymentIds: [...facts.payments.keys()],
      holdIds: [...facts.holds.keys()], walletIds: [...facts.wallets.keys()], refs: [...refs, ...heldBeside(refs)], alertAccountIds: alertAccountsOf(refs),
    });
    const book = new BalanceBook(balances);
    const now = new Date();
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
    const absorb = (command: ParsedCommand, decision: Decision): void => {
      // A batch's transfers are written as if each were a command of its own.
      for (const part of decision.parts ?? []) absorb(command, part);
      for (const { entry, postings } of decision.entries) {
        const applied: EntryWrite = {
          id: entry.id, kind: entry.kind, commandId: command.envelope.id, transferId: entry.transferId, quoteId: entry.quoteId, paymentId: entry.paymentId, postings,
        };
        write.entries.push(applied);
        write.outbox.push(entryRow(applied, now));
      }
      write.outbox.push(...thresholdCrossings(alerts, decision.entries).map((e) => eventRow(e, environment, now)));
      if (decision.transfer) {
        if (decision.transferIsNew) write.newTransfers.push(decision.transfer);
        else changed.set(decision.transfer.id, decision.transfer);
        transfers.set(decision.transfer.id, decision.transfer);
      }
      if (decision.payment) {
        if (decision.paymentIsNew) createdPayments.add(decision.payment.id);
        else if (!createdPayments.has(decision.payment.id)) changedPayments.set(decision.payment.id, decision.payment);
        payments.set(decision.payment.id, decision.payment);
        write.paymentTransitions.push(...decision.paymentTransitions);
      }
      if (decision.hold) {
        if (decision.holdIsNew) createdHolds.add(decision.hold.id);
        else if (!createdHolds.has(decision.hold.id)) changedHolds.set(decision.hold.id, decision.hold);
        holds.set(decision.hold.id, decision.hold);
      }
      if (decision.consumedQuote) {
        write.consumedQuotes.push(decision.consumedQuote);
        quotes.set(decision.consumedQuote.id, decision.consumedQuote);
      }
      if (decision.lateCompletion) write.lateCompletions.push(decision.lateCompletion);
      write.transitions.push(...decision.transitions);
      write.outbox.push(...decision.events.map((e) => eventRow(e, environment, now)));
      if (decision.partnerCommand) {
        const { partner, accountId, payload } = decision.partnerCommand;
        write.outbox.push(partnerCommandRow(partner, accountId, payload, now));
      }
    };
    for (const command of commands) {
      const decision = decide(command, facts, { transfers, quotes, payments, faucetToday, wallets, holds }, book, now);
      absorb(command, decision);
      const outcome = JSON.stringify(decision.outcome);
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
    for (const hold of write.newHolds) state.holdsDue?.(hold.expires_at);
    return { outcomes, roundId, outbox: write.outbox };
  }, state.statementTimeoutMs);
}

/** Whether a command is decided now: not decided before, and its key not held by another route's request. */
const isFresh = (known: KnownCommand | undefined) => !known || (known.decided === null && !known.keyHeldByApi);

/**
 * Every message of the batch answered, in order: the first message of a command decided in
 * this round gets its outcome; any other message of the same command (a retry, a duplicate
 * racing it, a redelivery) gets that outcome as a replay, or a conflict when it is another
 * request under the same key.
 */
function answers(messages: Delivered<LedgerCommandEnvelope>[], known: Map<string, KnownCommand>, decidedNow: Map<string, string>): Reply[] {
  const firstMessage = new Map<string, LedgerCommandEnvelope>();
  const replies: Reply[] = [];
  for (const { value: message } of messages) {
    const first = firstMessage.get(message.id);
    if (!first) firstMessage.set(message.id, message);
    const outcome = decidedNow.get(message.id);
    if (outcome !== undefined) {
      replies.push(first ? answerTo(message, outcome, first.fingerprint ?? null, true) : { message, outcome, replayed: false });
      continue;
    }
    const before = known.get(message.id);
    if (before?.decided) replies.push(answerTo(message, before.decided.outcome, before.decided.fingerprint, true));
    else if (before?.keyHeldByApi) replies.push(conflictWith(message));
  }
  return replies;
}

export async function handleLedgerBatch(runtime: Runtime, state: LedgerState, messages: Delivered<LedgerCommandEnvelope>[]): Promise<void> {
  const { publisher } = state;
  const all = uniqueCommands(messages);
  // The facts are read for every command, in the statement that checks for commands decided
  // before: a command decided before is rare, and waiting for that check first cost a round trip.
  const { known, facts } = await gatherFacts(runtime, all);
  const fresh = all.filter((c) => isFresh(known.get(c.envelope.id)));
  if (fresh.length === 0) {
    await state.replies.send(answers(messages, known, new Map()));
    return;
  }
  const published = publisher.takeAcknowledged();
  let outcome: BatchOutcome;
  try {
    outcome = await applyBatch(runtime, state, fresh, facts, published);
  } catch (error) {
    publisher.returnAcknowledged(published);
    throw error;
  }
  // Committed: the offsets may be committed now. The replies go out first, then the outbox, in
  // the background and in order; a crash before that leaves the round to the sweeper.
  await state.replies.send(answers(messages, known, outcome.outcomes));
  await publisher.publish({ roundId: outcome.roundId, messages: outcome.outbox });
}
