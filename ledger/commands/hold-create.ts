// hold.create: an amount of a side (the main balance or a wallet) moved from available to held,
// set aside until captured, voided or expired (DESIGN.md section 5g; what hold commands share: ../hold-rules.ts).
import type { BalanceBook } from '../balances';
import { sideAccounts, sideEvent } from '../balance-events';
import { heldBy, MAIN_WALLET, spendable } from '../chart';
import { post, refusal, type Decision } from '../decision';
import { holdDecision, holdEvent, sideOf } from '../hold-rules';
import type { HoldRecord } from '../holds';
import type { Metadata } from '../metadata';
import { Money, type Currency } from '../money';
import { entry } from '../postings';
import { invalid, isCanonicalUuid, isTextOrNull } from '../screen';
import type { WalletRecord } from '../wallets';
import type { LedgerCommand } from './command';
import type { AccountFacts } from './facts';

/** Moves `amount` from the main balance's or a wallet's available to held until `expires_at` (DESIGN.md section 5g). */
export interface HoldCreate {
  hold_id: string;
  amount: string;
  currency: Currency;
  /** Null: the main balance. */
  wallet_id: string | null;
  expires_at: string;
  description: string | null;
  /** The client's own values; absent: none. */
  metadata?: Metadata;
}

export const holdCreate: LedgerCommand<HoldCreate> = {
  shape: { ids: ['hold_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true, metadata: 'create' },
  parse(payload) {
    const fields = payload as Record<string, unknown>;
    if (fields.wallet_id !== null && !isCanonicalUuid(fields.wallet_id)) return { refusal: invalid('wallet_id', 'wallet_id must be null (the main balance) or a wallet id') };
    if (typeof fields.expires_at !== 'string' || Number.isNaN(Date.parse(fields.expires_at))) return { refusal: invalid('expires_at', 'expires_at must be an ISO 8601 instant') };
    if (!isTextOrNull(fields.description)) return { refusal: invalid('description', 'description must be text') };
    return { payload: payload as HoldCreate };
  },
  needs: (payload) => ({ sender: true, wallets: payload.wallet_id !== null ? [payload.wallet_id] : [] }),
  accounts({ wallet_id: walletId, currency }, accountId, facts) {
    if (!facts.accountsById.has(accountId)) return [];
    // Another account's wallet, or none: refused, and no ledger account is made for it.
    if (walletId !== null && facts.wallets.get(walletId)?.account_id !== accountId) return [];
    return sideAccounts(accountId, walletId ?? MAIN_WALLET, currency);
  },
  decide: ({ commandId, accountId, payload, facts, locked, book, now }) => decideHoldCreate(commandId, accountId, payload, { account: facts.accountsById.get(accountId) ?? null, wallets: locked.wallets }, book, now),
};

export interface HoldCreateFacts {
  account: AccountFacts | null;
  /** The wallet the command names, as locked for the round. */
  wallets: Map<string, WalletRecord>;
}

/** Checks in order of precedence. */
function refuseHoldCreate(accountId: string, command: HoldCreate, { account, wallets }: HoldCreateFacts, book: BalanceBook, now: Date): Decision | null {
  if (!account) return refusal('resource_not_found', 'the account does not exist');
  if (account.kybStatus !== 'active') return refusal('account_not_active', `the account's KYB status is ${account.kybStatus}; it must be active to move money`);
  if (command.wallet_id !== null) {
    const wallet = wallets.get(command.wallet_id);
    if (!wallet || wallet.account_id !== accountId || wallet.closed_at !== null) return refusal('wallet_not_found', 'wallet_id names no open wallet of the account', 'wallet_id');
  }
  if (new Date(command.expires_at).getTime() <= now.getTime()) return refusal('invalid_request', 'expires_at must lie in the future', 'expires_at');
  if (book.balance(spendable(accountId, command.wallet_id, command.currency)).isLessThan(command.amount)) {
    return refusal('insufficient_funds', `the available ${command.currency} balance is below the amount`, 'amount');
  }
  return null;
}

export function decideHoldCreate(commandId: string, accountId: string, command: HoldCreate, facts: HoldCreateFacts, book: BalanceBook, now: Date): Decision {
  const refused = refuseHoldCreate(accountId, command, facts, book, now);
  if (refused) return refused;
  const amount = new Money(command.amount);
  const hold: HoldRecord = {
    id: command.hold_id, account_id: accountId, wallet_id: command.wallet_id, command_id: commandId, status: 'active', currency: command.currency,
    amount: amount.toFixed(), captured_amount: '0', released_amount: '0', description: command.description, metadata: command.metadata ?? {}, captures: [],
    expires_at: new Date(command.expires_at), created_at: now, updated_at: now,
  };
  const decision = holdDecision(hold, true);
  post(decision, book, entry(command.hold_id, 'hold_create', {}, [
    { account: spendable(accountId, command.wallet_id, command.currency), amount: amount.negated() },
    { account: heldBy(accountId, command.wallet_id, command.currency), amount },
  ]));
  decision.events.push(holdEvent(hold, 'hold.created'), sideEvent(book, accountId, sideOf(hold), command.currency));
  return decision;
}
