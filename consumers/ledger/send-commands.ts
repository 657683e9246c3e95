// Commands the ledger sends itself (hold expiries, scheduled runs, a test clock's due work), on
// ledger.commands keyed by their account like every command, so each is decided in the rounds of
// its account's partition.
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { sendBatches } from '../../src/kafka/send-batches';
import { TOPICS } from '../../src/kafka/topics';
import type { Runtime } from '../../src/runtime';

export async function sendCommands(runtime: Runtime, commands: LedgerCommandEnvelope[]): Promise<void> {
  if (commands.length === 0) return;
  const messages = await Promise.all(commands.map(async (command) => ({ key: command.account_id, value: await runtime.codec.encode(TOPICS.ledgerCommands, command) })));
  await sendBatches(runtime.producer, [{ topic: runtime.names.full(TOPICS.ledgerCommands), messages }]);
}
