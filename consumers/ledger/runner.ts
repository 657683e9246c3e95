// Runs the ledger consumer as a member of the ledger consumer group, with the outbox sweeper.
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { startConsumer } from '../../src/kafka/consumer';
import { TOPICS } from '../../src/kafka/topics';
import type { RunningRole, Runtime } from '../../src/runtime';
import { handleLedgerBatch } from './handler';
import { startOutboxSweeper } from './sweeper';

export async function startLedger(runtime: Runtime): Promise<RunningRole> {
  const consumer = await startConsumer<LedgerCommandEnvelope>(runtime, {
    groupId: `${runtime.names.prefix}ledger`,
    topic: TOPICS.ledgerCommands,
    // Partitions are applied concurrently; batches that share accounts serialise on row locks.
    partitionsConsumedConcurrently: 3,
    handleBatch: (messages) => handleLedgerBatch(runtime, messages),
  });
  const sweeper = startOutboxSweeper(runtime);
  return {
    role: 'ledger',
    stop: async () => {
      await sweeper.stop();
      await consumer.disconnect();
    },
  };
}
