// The ledger consumer: the only writer of money (DESIGN.md section 3). It reads a batch of commands
// from Kafka and has the ledger decide and write them as one round in one Postgres transaction
// (ledger/round.ts: it reads what they name under its locks); offsets are committed by the runner only after this
// resolves. After commit the replies go out first, then the outbox. A command decided before
// changes nothing: each of its messages is answered with the stored outcome, or, when the message
// is another request under the same Idempotency-Key, with a conflict (DESIGN.md section 5f).
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import type { KnownCommand, LedgerStore } from '../../ledger/ports';
import { runRound, type OutboxRows, type RoundOutcome } from '../../ledger/round';
import type { Delivered } from '../../src/kafka/consumer';
import type { Runtime } from '../../src/runtime';
import { entryRow, eventRow, partnerCommandRow } from '../../src/outbox/rows';
import type { RoundPublisher } from './publisher';
import { answerTo, conflictWith, type Reply, type ReplySender } from './replies';
import { parseCommand, type ParsedCommand } from './plan';

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

/** What the ledger keeps between rounds. */
export interface LedgerState {
  /** Where rounds are locked and written (Postgres: ledger/store/postgres.ts). */
  store: LedgerStore;
  publisher: RoundPublisher;
  replies: ReplySender;
  /** Told each new hold's expiry once its round committed (the hold expiry's next sweep). */
  holdsDue?: (expiresAt: Date) => void;
  /** The server's bound on each statement of a round (ledger/store/round-transaction.ts); none: the default. Tests shorten it. */
  statementTimeoutMs?: number;
}

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
  const published = publisher.takeAcknowledged();
  let outcome: RoundOutcome;
  const environment = runtime.config.environment;
  const rows: OutboxRows = {
    event: (event, now) => eventRow(event, environment, now), entry: entryRow, partnerCommand: partnerCommandRow,
  };
  try {
    outcome = await runRound(state.store, { ...state, rows }, uniqueCommands(messages), published);
  } catch (error) {
    publisher.returnAcknowledged(published);
    throw error;
  }
  // Every command decided before: nothing written, the acknowledged rounds are marked by the next round.
  if (!outcome.written) publisher.returnAcknowledged(published);
  // Committed: the offsets may be committed now. The replies go out first, then the outbox, in
  // the background and in order; a crash before that leaves the round to the sweeper.
  await state.replies.send(answers(messages, outcome.known, outcome.outcomes));
  if (outcome.written) await publisher.publish({ roundId: outcome.written.roundId, messages: outcome.written.outbox });
}
