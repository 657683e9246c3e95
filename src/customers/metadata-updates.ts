// A customer's or a contact's metadata changed by a patch (DESIGN.md section 5h), with any other
// changes of the same request, in one transaction: the row is locked while the patch is applied
// (ledger/metadata.ts patchMetadata, the rule the ledger applies to transfers and holds), so two
// patches at once each keep the other's keys, and one that would pass 50 keys changes nothing.
import { patchMetadata, type MetadataPatch } from '../../ledger/metadata';
import type { Db } from '../db';
import { DomainError } from '../domain-error';

/**
 * Applies `patch` (absent: none) and `changes` to the row `id` of `table`, returning it as it is now.
 * @throws DomainError invalid_request naming the first key past the bound
 */
export async function updateWithMetadata<Row>(db: Db, table: 'customers' | 'contacts', id: string, patch: MetadataPatch | undefined, changes: Record<string, unknown>): Promise<Row> {
  return db.transaction(async (trx) => {
    const values = { ...changes };
    if (patch !== undefined) {
      const { metadata } = await trx(table).where('id', id).forUpdate().first('metadata');
      const result = patchMetadata(metadata, patch);
      if ('problem' in result) throw new DomainError('invalid_request', result.problem.message, result.problem.field);
      values.metadata = JSON.stringify(result.metadata);
    }
    const [row] = await trx(table).where('id', id).update(values).returning('*');
    return row as Row;
  });
}
