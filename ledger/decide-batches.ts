// Transfer batches (DESIGN.md section 5g): many transfers in one command, decided in order in one
// round against the round's balances, each exactly as transfer.create decides one (decide.ts), so
// a batch refuses what a single transfer would refuse and moves money as it would: items sent from
// one wallet (from_wallet_id) count together against its balance as others against the main one. Atomic: the
// balances are put back as they were when any item is refused, and nothing of the batch is
// written (one transaction, every transfer or none). Not atomic: each item stands alone.
import { decideTransferCreate, emptyDecision, type Decision, type TransferFacts } from './decide';
import type { BalanceBook } from './balances';
import type { TransferBatch, TransferCreate } from './messages';
import type { BatchItem, TransferBatchOutcome } from './outcome';

/** The command id an item's transfer is recorded under (transfers.command_id is unique). */
export const itemCommandId = (commandId: string, index: number): string => `${commandId}:${index}`;

export function decideTransferBatch(commandId: string, accountId: string, command: TransferBatch, factsOf: (item: TransferCreate) => TransferFacts,
  book: BalanceBook, now: Date): Decision {
  const restore = command.atomic ? book.checkpoint() : null;
  const parts: Decision[] = [];
  const items: BatchItem[] = command.items.map((item, index) => {
    const part = decideTransferCreate(itemCommandId(commandId, index), item, factsOf(item), book, now);
    if (part.outcome.kind === 'refused') {
      const { code, message, field } = part.outcome;
      return { index, status: 'refused', transfer_id: item.transfer_id, error: { code, message, field: field === null ? null : `transfers[${index}].${field}` } };
    }
    parts.push(part);
    return { index, status: 'created', transfer_id: item.transfer_id, error: null };
  });
  const refusedCount = items.filter((i) => i.status === 'refused').length;
  if (restore && refusedCount > 0) {
    // All or none: the items decided so far are undone, their balances as before the batch.
    restore();
    parts.length = 0;
    for (const item of items) if (item.status === 'created') item.status = 'not_created';
  }
  const created = items.filter((i) => i.status === 'created').length;
  const status = created === items.length ? 'completed' : created === 0 ? 'failed' : 'partial';
  const outcome: TransferBatchOutcome = {
    kind: 'transfer_batch', batch: { id: commandId, account_id: accountId, atomic: command.atomic, status, items, created_at: now.toISOString() },
  };
  const decision = emptyDecision(outcome);
  decision.parts = parts;
  return decision;
}
