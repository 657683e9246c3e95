// reconciliation.adjust: what a finance desk's reconciliation posts between a partner's settlement account and suspense.
import { partnerSettlement, reconciliationSuspense } from '../chart';
import { decideReconciliationAdjust } from '../decide-adjustments';
import type { ReconciliationAdjust } from '../messages';
import { isCurrency } from '../money';
import { asScreened, type LedgerCommand } from './command';

export const reconciliationAdjust: LedgerCommand<ReconciliationAdjust> = {
  // Finance names the partner's settlement account (`reconciliation:<partner>`), not an account.
  shape: { ids: ['exception_id', 'entry_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: false },
  parse: asScreened,
  needs: () => ({}),
  accounts: ({ partner, currency }) => (isCurrency(currency) ? [partnerSettlement(partner, currency), reconciliationSuspense(currency)] : []), // else refused: no such currency
  decide: ({ payload, book }) => decideReconciliationAdjust(payload, book),
};
