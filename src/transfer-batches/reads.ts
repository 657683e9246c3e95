// The batches' read model (DESIGN.md section 5g): a batch is one ledger command, and the ledger
// keeps its decided outcome, every item's, in processed_commands in the round that wrote its
// transfers; the batch's id is the command's. Read here, a batch is exactly what its POST answered.
import type { TransferBatchOutcome } from '../../ledger/outcome';
import type { Db } from '../db';

export type BatchRecord = TransferBatchOutcome['batch'];

export class TransferBatchReads {
  constructor(private readonly db: Db) {}

  /** The batch, or undefined when no batch has this id (a refused batch request left none). */
  async byId(id: string): Promise<BatchRecord | undefined> {
    const row: { outcome: unknown } | undefined = await this.db('processed_commands').where({ command_id: id, type: 'transfer.batch' }).first('outcome');
    if (!row) return undefined;
    const outcome = (typeof row.outcome === 'string' ? JSON.parse(row.outcome) : row.outcome) as TransferBatchOutcome | { kind: 'refused' };
    return outcome.kind === 'transfer_batch' ? outcome.batch : undefined;
  }
}

/** A batch as the API shows it: every item in the order sent, a refused item's error as SPEC.md section 7's error body. */
export function batchView(batch: BatchRecord) {
  return {
    id: batch.id, atomic: batch.atomic, status: batch.status, created_at: batch.created_at,
    items: batch.items.map((item) => ({
      index: item.index, status: item.status, transfer_id: item.status === 'created' ? item.transfer_id : null,
      error: item.error ? { success: false, error: item.error.code, message: item.error.message, details: item.error.field } : null,
    })),
  };
}
