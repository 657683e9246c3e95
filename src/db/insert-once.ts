// A creation's row written once under its id, for the creations whose id derives from their
// Idempotency-Key's execution (src/idempotency/derived-ids.ts createdId).
import type { Knex } from 'knex';

/**
 * Inserts `row` unless a row with its id is there already (made by an execution of the same key
 * whose request died before its answer was recorded); answers the stored row, and whether this
 * insert made it.
 */
export async function insertOnce<T>(db: Knex | Knex.Transaction, table: string, row: { id: string } & Record<string, unknown>): Promise<{ row: T; created: boolean }> {
  const [inserted] = await db(table).insert(row).onConflict('id').ignore().returning('*');
  if (inserted) return { row: inserted as T, created: true };
  return { row: (await db(table).where('id', row.id).first()) as T, created: false };
}
