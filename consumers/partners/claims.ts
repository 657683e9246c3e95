// Once per transfer state: the claim an instruction takes before it touches the partner
// (migrations/20261127090000_partner_instructions.ts). Attempts grow along one retry chain, so a
// copy of an older instruction (the outbox sweeper publishing a round whose "published" mark did
// not land, a batch re-run after some of its outputs were sent) finds a newer claim and is
// dropped. The very message that took the claim may take it again: a batch whose outputs were
// never sent is delivered again, and dropping it would end the chain. A return's chain claims under
// `return:<reversal id>` (returns.ts), apart from its transfer's.
import type { Knex } from 'knex';
import type { ReversalStatus, TransferStatus } from '../../ledger/transfers';

/** True when this instruction may run: its attempt is newer than the last claimed, or it is that claim's own message. */
export async function claimInstruction(db: Knex, transferId: string, attempt: number, source: string): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(`
    INSERT INTO partner_instructions AS c (transfer_id, attempt, source, claimed_at) VALUES (?, ?, ?, now())
    ON CONFLICT (transfer_id) DO UPDATE SET attempt = excluded.attempt, source = excluded.source, claimed_at = excluded.claimed_at
      WHERE c.attempt < excluded.attempt OR (c.attempt = excluded.attempt AND c.source = excluded.source)
    RETURNING transfer_id`, [transferId, attempt, source]);
  return rows.length === 1;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface TransferState { status: TransferStatus; failure_code: string | null }

/** The transfer as the ledger holds it now; null when this database has no such transfer. */
export async function transferState(db: Knex, transferId: string): Promise<TransferState | null> {
  if (!UUID.test(transferId)) return null;
  const row = await db('transfers').where({ id: transferId }).first('status', 'failure_code') as TransferState | undefined;
  return row ?? null;
}

/** A reversal of a transfer as the ledger holds it now; null when this database has no such transfer or reversal. */
export async function reversalState(db: Knex, transferId: string, reversalId: string): Promise<ReversalStatus | null> {
  if (!UUID.test(transferId)) return null;
  const { rows } = await db.raw<{ rows: Array<{ status: ReversalStatus }> }>(
    `SELECT r->>'status' AS status FROM transfers t CROSS JOIN LATERAL jsonb_array_elements(t.reversals) r WHERE t.id = ? AND r->>'id' = ?`, [transferId, reversalId]);
  return rows[0]?.status ?? null;
}
