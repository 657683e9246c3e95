// Runs the ledger consumer as a member of the ledger consumer group, with the outbox sweeper, the
// sweep that expires holds, the due-runs worker of scheduled transfers, and the advancing worker
// of test clocks.
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { startConsumer, type Delivered } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import type { RunningRole, Runtime } from '../../src/runtime';
import { postgresLedgerStore } from '../../ledger/store/postgres';
import { LedgerRound } from '../../ledger/store/round-transaction';
import { fillPool, knowTopics, warmUp, WARM_CONNECTIONS } from '../../src/warm-up';
import { GroupCommit } from './group-commit';
import { handleLedgerBatch } from './handler';
import { RoundPublisher } from './publisher';
import { refuseAlone } from './refuse';
import { ReplySender } from './replies';
import { startOutboxSweeper } from '../../src/outbox/sweeper';
import { HoldExpiry } from './hold-expiry';
import { startScheduledRuns } from './scheduled-runs';
import { startClockAdvances, type ClockDueWork } from './clock-advance';

export interface LedgerOptions {
  /** What a test clock's advance does beside holds and runs: its accounts' payments (src/roles wires the partners' side in). */
  clockWork?: ClockDueWork;
}

export async function startLedger(runtime: Runtime, options: LedgerOptions = {}): Promise<RunningRole> {
  const publisher = await RoundPublisher.start(runtime);
  const replies = new ReplySender(runtime);
  const holdExpiry = new HoldExpiry(runtime);
  const state = { store: postgresLedgerStore(runtime.db), publisher, replies, holdsDue: (at: Date) => holdExpiry.dueAt(at) };
  const rounds = new GroupCommit<Delivered<LedgerCommandEnvelope>>((messages) => handleLedgerBatch(runtime, state, messages));
  let markJoined: () => void = () => undefined;
  const joined = new Promise<void>((resolve) => { markJoined = resolve; });
  const consumer = await startConsumer<LedgerCommandEnvelope>(runtime, {
    groupId: `${runtime.names.prefix}ledger`,
    topic: TOPICS.ledgerCommands,
    // Every partition's batch is handed over at once and committed in one round (group-commit.ts).
    partitionsConsumedConcurrently: runtime.config.kafkaPartitions,
    // A command delivered again is recognised (processed_commands) and only its reply re-sent.
    commitIntervalMs: 500,
    handleBatch: (messages, { isolating }) => (isolating ? rounds.submitAlone(messages) : rounds.submit(messages)),
    refuseAlone: (message, error) => refuseAlone(runtime, replies, message, error),
    onGroupJoin: () => markJoined(),
  });
  // Ready once it holds its partitions, with its connections open and the metadata of the topics
  // it writes known: a command sent right after the start is decided as fast as later ones.
  await warmUp('ledger', [
    () => joined,
    () => fillPool(runtime.db).then(() => LedgerRound.warm(runtime.db, WARM_CONNECTIONS)),
    () => knowTopics(runtime, [TOPICS.ledgerReplies, TOPICS.domainEvents, TOPICS.ledgerEntries, TOPICS.partnerCommands]),
  ]);
  const sweeper = startOutboxSweeper(runtime);
  holdExpiry.start();
  const { config } = runtime;
  const scheduledRuns = startScheduledRuns(runtime, { sweepMs: config.scheduledRunsSweepMs, resendAfterMs: config.scheduledRunResendAfterMs, dayMs: config.scheduledTransferDayMs });
  await scheduledRuns.start();
  const clockAdvances = startClockAdvances(runtime, options.clockWork ?? null);
  await clockAdvances.start();
  return {
    role: 'ledger',
    stop: async () => {
      await clockAdvances.stop();
      await scheduledRuns.stop();
      await holdExpiry.stop();
      await sweeper.stop();
      await consumer.disconnect();
      await replies.flush();
      await publisher.stop();
    },
  };
}
