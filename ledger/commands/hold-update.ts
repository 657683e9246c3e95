// hold.update: a hold's metadata changed by a patch (DESIGN.md section 5h), decided on the hold as
// locked for the round, as transfer.update a transfer's: no money moves, and a capture or void
// decided after it in the round carries the new metadata in its event.
import { refusal } from '../decision';
import { holdDecision } from '../hold-rules';
import { patchMetadata, type MetadataPatch } from '../metadata';
import { asScreened, type LedgerCommand } from './command';

/** Changes the metadata of a hold of the commanding account by a patch, as transfer.update a transfer's. */
export interface HoldUpdate {
  hold_id: string;
  metadata: MetadataPatch;
}

export const holdUpdate: LedgerCommand<HoldUpdate> = {
  shape: { ids: ['hold_id'], amounts: [], currencies: [], accountIsUuid: true, metadata: 'patch' },
  parse: asScreened,
  needs: (payload) => ({ holds: [payload.hold_id] }),
  accounts: () => [],
  decide({ accountId, payload, locked, now }) {
    const current = locked.holds.get(payload.hold_id);
    if (!current || current.account_id !== accountId) return refusal('hold_not_found', 'no such hold', 'hold_id');
    const result = patchMetadata(current.metadata, payload.metadata);
    if ('problem' in result) return refusal('invalid_request', result.problem.message, result.problem.field);
    return holdDecision({ ...current, metadata: result.metadata, updated_at: now }, false);
  },
};
