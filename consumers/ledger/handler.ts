// The ledger consumer: the only writer of money (DESIGN.md section 3). A batch of commands is
// decided and written in one Postgres transaction (postings, balances, transfers, processed
// command ids, outbox); offsets are committed by the runner only after this resolves. After
// commit the outbox rows and the replies are published; a redelivered command changes nothing
// and re-sends its stored reply.
import { randomUUID } from 'node:crypto';
import { BalanceBook } from '../../ledger/balances';
import { decideFaucetCredit, decideFxExecute, decidePartnerResult, decideTransferCreate, type Decision } from '../../ledger/decide';
import { decidePaymentCreate, decidePaymentUpdate } from '../../ledger/decide-payments';
import type { PaymentRecord } from '../../ledger/payments';
import type { FxQuoteRecord } from '../../ledger/fx-quotes';
import { REPLY_TO_HEADER, type LedgerCommandEnvelope, type LedgerReplyEnvelope } from '../../ledger/messages';
import {
  accountFacts, accountFactsByBank, bankKey, ensureLedgerAccounts, lockLedgerAccounts,
  processedOutcomes, readPayments, readQuotes, readTransfers, writeBatch, type BatchWrite, type EntryWrite,
} from '../../ledger/store';
import type { LedgerAccountRef } from '../../ledger/chart';
import type { TransferRecord } from '../../ledger/transfers';
import type { Delivered } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import type { Runtime } from '../../src/runtime';
import { entryRow, eventRow, partnerCommandRow, type OutboxMessage } from './outbox';
import type { RoundPublisher } from './publisher';
import { ledgerAccountsOf, parseCommand, recipientOf, type BatchFacts, type ParsedCommand } from './plan';

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

async function gatherFacts(runtime: Runtime, commands: ParsedCommand[]): Promise<BatchFacts> {
  const creates = commands.flatMap((c) => (c.type === 'transfer.create' ? [c.payload] : []));
  const results = commands.flatMap((c) => (c.type === 'transfer.partner_result' ? [c.payload.transfer_id] : []));
  const quoteIds = commands.flatMap((c) => (c.type === 'fx.execute' ? [c.payload.quote_id] : []));
  const paymentIds = commands.flatMap((c) => (c.type === 'payment.update' ? [c.payload.payment_id] : []));
  const senderIds = commands.filter((c) => c.type === 'transfer.create' || c.type === 'fx.execute' || c.type === 'payment.create').map((c) => c.envelope.account_id);
  const emails = creates.flatMap((t) => (t.type === 'internal' && t.recipient_email ? [t.recipient_email] : []));
  const banks = creates.flatMap((t) => (t.type === 'external' && t.recipient ? [{ accountNumber: t.recipient.bank.account_number, currency: t.recipient.bank.currency }] : []));
  const [{ byId: accountsById, byEmail: accountsByEmail }, accountsByBank, transfers, quotes, payments] = await Promise.all([
    accountFacts(runtime.db, [...new Set(senderIds)], [...new Set(emails)]),
    accountFactsByBank(runtime.db, banks),
    readTransfers(runtime.db, results, false),
    readQuotes(runtime.db, quoteIds, false),
    readPayments(runtime.db, paymentIds, false),
  ]);
  return { accountsById, accountsByEmail, accountsByBank, transfers, quotes, payments };
}

/** The records a batch decides on, as locked in its transaction and changed by its earlier commands. */
interface Locked { transfers: Map<string, TransferRecord>; quotes: Map<string, FxQuoteRecord>; payments: Map<string, PaymentRecord> }

function decide(command: ParsedCommand, facts: BatchFacts, { transfers, quotes, payments }: Locked, book: BalanceBook, now: Date): Decision {
  switch (command.type) {
    case 'faucet.credit':
      return decideFaucetCredit(command.envelope.account_id, command.payload, book);
    case 'transfer.create':
      return decideTransferCreate(command.envelope.id, command.payload, {
        sender: facts.accountsById.get(command.envelope.account_id) ?? null,
        recipient: recipientOf(command.payload, facts, bankKey),
      }, book, now);
    case 'transfer.partner_result':
      return decidePartnerResult(command.payload, transfers.get(command.payload.transfer_id) ?? null, book, now);
    case 'fx.execute':
      return decideFxExecute(command.envelope.account_id, command.payload, {
        account: facts.accountsById.get(command.envelope.account_id) ?? null,
        quote: quotes.get(command.payload.quote_id) ?? null,
      }, book, now);
    case 'payment.create':
      return decidePaymentCreate(command.envelope.id, command.payload, facts.accountsById.get(command.envelope.account_id) ?? null, book, now);
    case 'payment.update':
      return decidePaymentUpdate(command.payload, payments.get(command.payload.payment_id) ?? null, book, now);
  }
}

interface BatchOutcome {
  /** Each decided command with its outcome's JSON text. */
  replies: Array<{ command: ParsedCommand; outcome: string }>;
  roundId: string;
  outbox: BatchWrite['outbox'];
}

/** What the ledger keeps between rounds. */
export interface LedgerState {
  publisher: RoundPublisher;
  /** Codes of ledger accounts known to exist (they are never deleted): no insert is tried for them. */
  knownLedgerAccounts: Set<string>;
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

async function applyBatch(runtime: Runtime, state: LedgerState, commands: ParsedCommand[], facts: BatchFacts, publishedRounds: string[]): Promise<BatchOutcome> {
  const refs = commands.flatMap((c) => ledgerAccountsOf(c, facts, bankKey));
  await ensureAccounts(runtime, state, refs);
  const environment = runtime.config.environment;
  return runtime.db.transaction(async (trx) => {
    // Lock order, the same in every batch: transfers, quotes and payments by id, then ledger accounts by code.
    const transfers = await readTransfers(trx, [...facts.transfers.keys()], true);
    const quotes = await readQuotes(trx, [...facts.quotes.keys()], true);
    const payments = await readPayments(trx, [...facts.payments.keys()], true);
    const book = new BalanceBook(await lockLedgerAccounts(trx, refs));
    const now = new Date();
    const roundId = randomUUID();
    const write: BatchWrite = {
      entries: [], balances: [], newTransfers: [], changedTransfers: [], transitions: [], consumedQuotes: [],
      newPayments: [], changedPayments: [], paymentTransitions: [], processed: [], outbox: [], roundId, now,
    };
    const replies: BatchOutcome['replies'] = [];
    const changed = new Map<string, TransferRecord>();
    // A payment created in this batch is inserted once, in its latest state; others are updated.
    const createdPayments = new Set<string>();
    const changedPayments = new Map<string, PaymentRecord>();
    for (const command of commands) {
      const decision = decide(command, facts, { transfers, quotes, payments }, book, now);
      for (const { entry, postings } of decision.entries) {
        const applied: EntryWrite = {
          id: entry.id, kind: entry.kind, commandId: command.envelope.id, transferId: entry.transferId, quoteId: entry.quoteId, paymentId: entry.paymentId, postings,
        };
        write.entries.push(applied);
        write.outbox.push(entryRow(applied, now));
      }
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
      if (decision.consumedQuote) {
        write.consumedQuotes.push(decision.consumedQuote);
        quotes.set(decision.consumedQuote.id, decision.consumedQuote);
      }
      write.transitions.push(...decision.transitions);
      write.outbox.push(...decision.events.map((e) => eventRow(e, environment, now)));
      if (decision.partnerCommand) {
        const { partner, accountId, payload } = decision.partnerCommand;
        write.outbox.push(partnerCommandRow(partner, accountId, payload, now));
      }
      const outcome = JSON.stringify(decision.outcome);
      write.processed.push({ commandId: command.envelope.id, type: command.type, outcome });
      replies.push({ command, outcome });
    }
    write.changedTransfers = [...changed.values()];
    write.newPayments = [...createdPayments].map((id) => payments.get(id)!);
    write.changedPayments = [...changedPayments.values()];
    write.balances = book.changedAccounts();
    await writeBatch(trx, write, publishedRounds);
    return { replies, roundId, outbox: write.outbox };
  });
}

/** The reply, addressed in a header too: API processes skip others' replies without decoding them. */
function replyRow(command: ParsedCommand, outcome: string): OutboxMessage {
  const envelope: LedgerReplyEnvelope = { command_id: command.envelope.id, reply_to: command.envelope.reply_to, outcome };
  return { topic: TOPICS.ledgerReplies, key: command.envelope.id, payload: envelope, headers: { [REPLY_TO_HEADER]: command.envelope.reply_to! } };
}

export async function handleLedgerBatch(runtime: Runtime, state: LedgerState, messages: Delivered<LedgerCommandEnvelope>[]): Promise<void> {
  const { publisher } = state;
  const all = uniqueCommands(messages);
  // The facts are read for every command, side by side with the check for commands decided
  // before: a redelivered one is rare, and waiting for that check first cost a round trip.
  const [done, facts] = await Promise.all([processedOutcomes(runtime.db, all.map((c) => c.envelope.id)), gatherFacts(runtime, all)]);
  const fresh = all.filter((c) => !done.has(c.envelope.id));
  const redelivered = all.filter((c) => done.has(c.envelope.id) && c.envelope.reply_to).map((c) => replyRow(c, done.get(c.envelope.id)!));
  if (redelivered.length > 0) await publisher.publish({ roundId: null, messages: redelivered });
  if (fresh.length === 0) return;
  const published = publisher.takeAcknowledged();
  let outcome: BatchOutcome;
  try {
    outcome = await applyBatch(runtime, state, fresh, facts, published);
  } catch (error) {
    publisher.returnAcknowledged(published);
    throw error;
  }
  // Committed: the offsets may be committed now. The outbox and the replies go to Kafka in the
  // background, in order; a crash before that leaves the round to the sweeper.
  const replies = outcome.replies.filter((r) => r.command.envelope.reply_to).map((r) => replyRow(r.command, r.outcome));
  await publisher.publish({ roundId: outcome.roundId, messages: [...outcome.outbox, ...replies] });
}
