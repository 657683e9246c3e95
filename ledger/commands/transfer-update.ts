// transfer.update: the metadata of a transfer, or of one of its reversals, changed by a patch
// (DESIGN.md section 5h). No money moves; the ledger decides it because the ledger alone writes a
// transfer's record: the patch applies to the record as locked for the round, after the round's
// earlier commands on it, so two changes racing on one transfer each keep the other's keys, and an
// event decided later (transfer.reversed) carries what the transfer holds by then.
import { emptyDecision, refusal, type Decision } from '../decision';
import { metadataOf, patchMetadata, type MetadataPatch } from '../metadata';
import { transferOutcome } from '../outcome';
import { invalid, isCanonicalUuid } from '../screen';
import type { TransferRecord } from '../transfers';
import type { LedgerCommand } from './command';

/**
 * Changes the metadata of a transfer of the commanding account, or of one of its reversals
 * (`reversal_id`), by a patch (DESIGN.md section 5h): decided on the locked record, so two changes
 * of one transfer apply one after the other and neither loses the other's keys.
 */
export interface TransferUpdate {
  transfer_id: string;
  reversal_id: string | null;
  metadata: MetadataPatch;
}

/** The transfer (or the reversal of it that `update` names) with its metadata patched, or why not. */
function patched(transfer: TransferRecord, update: TransferUpdate, now: Date): TransferRecord | Decision {
  if (update.reversal_id === null) {
    const result = patchMetadata(transfer.metadata, update.metadata);
    return 'problem' in result ? refusal('invalid_request', result.problem.message, result.problem.field) : { ...transfer, metadata: result.metadata, updated_at: now };
  }
  const reversals = transfer.reversals ?? [];
  const index = reversals.findIndex((r) => r.id === update.reversal_id);
  if (index === -1) return refusal('resource_not_found', 'no such reversal of the transfer', 'reversal_id');
  const result = patchMetadata(metadataOf(reversals[index]), update.metadata);
  if ('problem' in result) return refusal('invalid_request', result.problem.message, result.problem.field);
  const changed = reversals.map((r, i) => (i === index ? { ...r, metadata: result.metadata } : r));
  return { ...transfer, reversals: changed, updated_at: now };
}

export const transferUpdate: LedgerCommand<TransferUpdate> = {
  shape: { ids: ['transfer_id'], amounts: [], currencies: [], accountIsUuid: true, metadata: 'patch' },
  parse(payload) {
    const reversalId = (payload as TransferUpdate).reversal_id;
    if (reversalId !== null && !isCanonicalUuid(reversalId)) return { refusal: invalid('reversal_id', 'reversal_id must be null (the transfer itself) or a reversal id') };
    return { payload: payload as TransferUpdate };
  },
  needs: (payload) => ({ transfers: [payload.transfer_id] }),
  accounts: () => [],
  decide({ accountId, payload, locked, now }) {
    const current = locked.transfers.get(payload.transfer_id);
    if (!current || current.account_id !== accountId) return refusal('transfer_not_found', 'no such transfer', 'transfer_id');
    const result = patched(current, payload, now);
    if ('outcome' in result) return result;
    const decision = emptyDecision(transferOutcome(result, false));
    decision.changes.push({ kind: 'transfer', transfer: result, isNew: false });
    return decision;
  },
};
