// reconciliation.adjust: what a finance desk's reconciliation posts between a partner's settlement account and suspense.
import { partnerSettlement, reconciliationSuspense } from '../chart';
import { decideReconciliationAdjust } from '../decide-adjustments';
import type { ReconciliationAdjust } from '../messages';
import { isCurrency } from '../money';
import { asScreened, type LedgerCommand } from './command';

export const reconciliationAdjust: LedgerCommand<ReconciliationAdjust> = {
  parse: asScreened,
  needs: () => ({}),
  accounts: ({ partner, currency }) => (isCurrency(currency) ? [partnerSettlement(partner, currency), reconciliationSuspense(currency)] : []), // else refused: no such currency
  decide: ({ payload, book }) => decideReconciliationAdjust(payload, book),
};
