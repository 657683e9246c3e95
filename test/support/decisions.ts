// What tests read of a ledger decision (ledger/decision.ts): the record it created or changed, the
// transitions it walked, the instruction it gives a partner, the exception it opens.
import { type ChangeOf, type Decision } from '../../ledger/decision';
import type { HoldRecord } from '../../ledger/holds';
import type { LateCompletionException, TransferRecord } from '../../ledger/transfers';

const last = <K extends Decision['changes'][number]['kind']>(decision: Decision, kind: K): ChangeOf<K> | undefined =>
  decision.changes.filter((change): change is ChangeOf<K> => change.kind === kind).at(-1);

export const decidedTransfer = (decision: Decision): TransferRecord | null => last(decision, 'transfer')?.transfer ?? null;
export const transferIsNew = (decision: Decision): boolean => last(decision, 'transfer')?.isNew ?? false;
export const decidedHold = (decision: Decision): HoldRecord | null => last(decision, 'hold')?.hold ?? null;
export const holdIsNew = (decision: Decision): boolean => last(decision, 'hold')?.isNew ?? false;
export const transitionsOf = (decision: Decision): Array<Omit<ChangeOf<'transfer_transition'>, 'kind'>> =>
  decision.changes.flatMap((change) => (change.kind === 'transfer_transition' ? [{ transferId: change.transferId, from: change.from, to: change.to, at: change.at }] : []));
export const lateCompletionOf = (decision: Decision): LateCompletionException | null => last(decision, 'late_completion')?.exception ?? null;

/** The partner instruction as the round sends it: the partner, the account, and the instruction. */
export function partnerCommandOf(decision: Decision): Omit<ChangeOf<'partner_instruction'>, 'kind'> | null {
  const change = last(decision, 'partner_instruction');
  if (!change) return null;
  const { kind: _kind, ...command } = change;
  return command;
}
