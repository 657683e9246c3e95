// faucet.credit: sandbox money from the faucet's equity, within its limits a day.
import type { BalanceBook } from '../balances';
import { balanceEvent } from '../balance-events';
import { available, faucetEquity } from '../chart';
import { emptyDecision, refusal, type Decision } from '../decision';
import { formatAmount, Money, STABLECOINS, type Amount, type Currency } from '../money';
import { faucetCredit as faucetCreditEntry } from '../postings';
import { asScreened, type LedgerCommand } from './command';
import { faucetKey, type AccountFacts } from './facts';

export interface FaucetCredit {
  entry_id: string;
  currency: Currency;
  amount: string;
}

/**
 * The sandbox faucet's bounds, in whole units of the credited currency: per credit, and per
 * account, currency and UTC day of the ledger's clock (every credit decided that day counts).
 * Large enough for a load test's funding, small enough that no account holds unbounded money.
 */
export const FAUCET_CREDIT_MAX = '1000000';
export const FAUCET_DAILY_MAX = '10000000';

export const faucetCredit: LedgerCommand<FaucetCredit> = {
  shape: { ids: ['entry_id'], amounts: ['amount'], currencies: ['currency'], accountIsUuid: true },
  parse: asScreened,
  needs: (payload) => ({ sender: true, faucet: payload.currency }),
  accounts: (payload, accountId) => [faucetEquity(payload.currency), available(accountId, payload.currency)],
  decide({ accountId, payload, facts, locked, book }) {
    const key = faucetKey(accountId, payload.currency);
    const credited = locked.faucetToday.get(key) ?? new Money(0);
    const decision = decideFaucetCredit(accountId, payload, book, facts.accountsById.get(accountId) ?? null, credited);
    // The round's own credits count towards the day's limit of its later ones.
    if (decision.entries.length > 0) locked.faucetToday.set(key, credited.plus(payload.amount));
    return decision;
  },
};

/** Checks in order of precedence; the first that fails is the answer. */
function refuseFaucetCredit(command: FaucetCredit, account: AccountFacts | null, creditedToday: Amount): Decision | null {
  const amount = new Money(command.amount);
  if (account && STABLECOINS.includes(command.currency) && !account.hasChainWallet) {
    return refusal('account_no_chain_wallet', `${command.currency} test funds need a chain wallet on the account (sign up with "chain_wallet": true)`, 'currency');
  }
  if (amount.isGreaterThan(FAUCET_CREDIT_MAX)) {
    return refusal('faucet_limit_exceeded', `the faucet credits at most ${FAUCET_CREDIT_MAX} ${command.currency} at a time`, 'amount');
  }
  if (amount.plus(creditedToday).isGreaterThan(FAUCET_DAILY_MAX)) {
    return refusal('faucet_limit_exceeded',
      `the faucet credits at most ${FAUCET_DAILY_MAX} ${command.currency} per account and UTC day; ${formatAmount(new Money(creditedToday), command.currency)} were credited today`, 'amount');
  }
  return null;
}

/**
 * A faucet credit. `account`: the credited account's facts (null: not read, as for a caller that
 * checked them itself); `creditedToday`: what the faucet credited the account in the currency
 * this UTC day before this command.
 */
export function decideFaucetCredit(accountId: string, command: FaucetCredit, book: BalanceBook,
  account: AccountFacts | null = null, creditedToday: Amount = new Money(0)): Decision {
  const refused = refuseFaucetCredit(command, account, creditedToday);
  if (refused) return refused;
  const amount = new Money(command.amount);
  const entry = faucetCreditEntry(command.entry_id, accountId, command.currency, amount);
  const postings = book.apply(entry);
  const event = balanceEvent(book, accountId, command.currency);
  const decision = emptyDecision({
    kind: 'faucet_credit', entry_id: command.entry_id, account_id: accountId, currency: command.currency,
    amount: formatAmount(amount, command.currency), available: event.attributes!.available as string, pending: event.attributes!.pending as string,
  });
  decision.entries.push({ entry, postings });
  decision.events.push(event);
  return decision;
}
