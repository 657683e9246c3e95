// A transfer's walk through its statuses (SPEC.md section 3): each step a transition the round
// records and, for the states SPEC.md section 6 names, an event. Every command that creates or
// settles a transfer (transfer.create and its batch, hold.capture, transfer.partner_result) walks it here.
import type { Decision, EventDraft } from './decision';
import { formatAmount } from './money';
import type { TransferRecord, TransferStatus } from './transfers';

/** Events name the lifecycle states of SPEC.md section 6; `quoting` has no event type. */
const EMITTED_STATUSES: readonly TransferStatus[] = ['pending', 'executing', 'completed', 'failed', 'rolled_back'];

function transferEvent(record: TransferRecord, status: TransferStatus): EventDraft {
  return {
    type: `transfer.${status}`, resourceType: 'transfer', resourceId: record.id, accountId: record.account_id, status,
    amount: formatAmount(record.amount, record.currency), currency: record.currency,
    attributes: { partner_payment_id: record.partner_payment_id, failure_code: record.failure_code }, metadata: record.metadata,
  };
}

/** Walks `record` along `path` (from its status, or from nothing when the decision creates it), ending in the path's last status. */
export function walk(record: TransferRecord, path: TransferStatus[], at: Date, decision: Decision): void {
  const isNew = decision.changes.some((c) => c.kind === 'transfer' && c.isNew && c.transfer.id === record.id);
  let from: TransferStatus | null = isNew ? null : record.status;
  for (const to of path) {
    decision.changes.push({ kind: 'transfer_transition', transferId: record.id, from, to, at });
    if (EMITTED_STATUSES.includes(to)) decision.events.push(transferEvent({ ...record, status: to }, to));
    from = to;
  }
  record.status = path[path.length - 1];
}
