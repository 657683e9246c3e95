// Balance alerts (DESIGN.md section 5g): an alert watches one available balance (the main
// balance's or a wallet's, in one currency) against a threshold, `below` or `above` it. The ledger
// decides a crossing in the round that makes it, posting by posting: a posting whose balance before
// lay within the threshold (below: at or over it; above: at or under it) and whose balance after
// lies beyond it crosses. Nothing fires while the balance stays beyond; it fires again once a
// posting has brought it back and another takes it beyond again. The event is written with the
// round's outbox, in the round's transaction, so a crossing is announced exactly when its postings
// are committed: never missed, never twice (a command is decided once, processed_commands).
import type { AppliedPosting } from './balances';
import type { EventDraft } from './decision';
import { formatAmount, Money, type Amount, type Currency } from './money';

export const ALERT_DIRECTIONS = ['below', 'above'] as const;
export type AlertDirection = (typeof ALERT_DIRECTIONS)[number];

export interface BalanceAlertRecord {
  id: string;
  account_id: string;
  /** null: the main balance. */
  wallet_id: string | null;
  currency: Currency;
  direction: AlertDirection;
  threshold: string;
}

/** Whether a balance lies beyond an alert's threshold. */
export function isBeyond(alert: Pick<BalanceAlertRecord, 'direction' | 'threshold'>, balance: Amount): boolean {
  return alert.direction === 'below' ? balance.isLessThan(alert.threshold) : balance.isGreaterThan(alert.threshold);
}

/** The alerts a posting is watched by: on an available balance of its account, wallet and currency. */
function watching(alerts: BalanceAlertRecord[], posting: AppliedPosting): BalanceAlertRecord[] {
  const { ref } = posting;
  if (ref.kind !== 'available' && ref.kind !== 'wallet_available') return [];
  const walletId = ref.kind === 'wallet_available' ? ref.walletId ?? null : null;
  return alerts.filter((a) => a.account_id === ref.accountId && a.currency === ref.currency && a.wallet_id === walletId);
}

/** The `balance.threshold_crossed` events of a command's entries, in posting order. */
export function thresholdCrossings(alerts: BalanceAlertRecord[], entries: Array<{ entry: { id: string; kind: string; transferId: string | null }; postings: AppliedPosting[] }>): EventDraft[] {
  if (alerts.length === 0) return [];
  const events: EventDraft[] = [];
  for (const { entry, postings } of entries) {
    for (const posting of postings) {
      const after = posting.balanceAfter;
      const before = after.minus(posting.amount);
      for (const alert of watching(alerts, posting)) {
        if (isBeyond(alert, before) || !isBeyond(alert, after)) continue;
        const currency = alert.currency;
        events.push({
          type: 'balance.threshold_crossed', resourceType: 'balance_alert', resourceId: alert.id, accountId: alert.account_id, status: alert.direction,
          amount: formatAmount(after, currency), currency,
          attributes: {
            alert_id: alert.id, wallet_id: alert.wallet_id ?? 'main', direction: alert.direction, threshold: formatAmount(new Money(alert.threshold), currency),
            balance_before: formatAmount(before, currency), balance_after: formatAmount(after, currency),
            entry_id: entry.id, entry_kind: entry.kind, transfer_id: entry.transferId, posting_id: posting.id,
          },
        });
      }
    }
  }
  return events;
}
