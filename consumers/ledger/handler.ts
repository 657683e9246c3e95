// The ledger consumer: the only writer of money (DESIGN.md section 3). It reads a batch of commands
// from Kafka, gathers what they name, and has the ledger decide and write them as one round in one
// Postgres transaction (ledger/round.ts); offsets are committed by the runner only after this
// resolves. After commit the replies go out first, then the outbox. A command decided before
// changes nothing: each of its messages is answered with the stored outcome, or, when the message
// is another request under the same Idempotency-Key, with a conflict (DESIGN.md section 5f).
import type { BatchFacts } from '../../ledger/commands';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import type { LedgerStore } from '../../ledger/ports';
import { runRound, type OutboxRows, type RoundOutcome } from '../../ledger/round';
import { accountFactsByBank, readPayments, readQuotes, readTransfers, readWallets, readHolds, roundFacts, faucetCreditedToday, type KnownCommand } from '../../ledger/store/reads';
import type { Delivered } from '../../src/kafka/consumer';
import type { Runtime } from '../../src/runtime';
import { entryRow, eventRow, partnerCommandRow } from './outbox';
import type { RoundPublisher } from './publisher';
import { answerTo, conflictWith, type Reply, type ReplySender } from './replies';
import { needsOf, parseCommand, walletIdsOfTransfers, type ParsedCommand } from './plan';

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
  const [{ known, byId: accountsById, byEmail: accountsByEmail, clockTimes }, accountsByBank, transfers, quotes, payments, faucetToday, wallets, holds] = await Promise.all([
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
  return { known, facts: { accountsById, accountsByEmail, accountsByBank, transfers, quotes, payments, faucetToday, wallets, holds, clockTimes } };
}

/** What the ledger keeps between rounds. */
export interface LedgerState {
  /** Where rounds are locked and written (Postgres: ledger/store/postgres.ts). */
  store: LedgerStore;
  publisher: RoundPublisher;
  replies: ReplySender;
  /** Codes of ledger accounts known to exist (they are never deleted): no insert is tried for them. */
  knownLedgerAccounts: Set<string>;
  /** Told each new hold's expiry once its round committed (the hold expiry's next sweep). */
  holdsDue?: (expiresAt: Date) => void;
  /** The server's bound on each statement of a round (ledger/store/round-transaction.ts); none: the default. Tests shorten it. */
  statementTimeoutMs?: number;
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
  let outcome: RoundOutcome;
  const environment = runtime.config.environment;
  const rows: OutboxRows = {
    event: (event, now) => eventRow(event, environment, now), entry: entryRow, partnerCommand: partnerCommandRow,
  };
  try {
    outcome = await runRound(state.store, { ...state, rows }, fresh, facts, published);
  } catch (error) {
    publisher.returnAcknowledged(published);
    throw error;
  }
  // Committed: the offsets may be committed now. The replies go out first, then the outbox, in
  // the background and in order; a crash before that leaves the round to the sweeper.
  await state.replies.send(answers(messages, known, outcome.outcomes));
  await publisher.publish({ roundId: outcome.roundId, messages: outcome.outbox });
}
