// fx.execute: a persisted quote converted inside its account, through the FX desk, once.
import type { BalanceBook } from '../balances';
import { balanceEvent } from '../balance-events';
import { available, fxPosition, fxSpread } from '../chart';
import { emptyDecision, refusal, type Decision } from '../decision';
import { quoteStatus, type FxQuoteRecord } from '../fx-quotes';
import { Money, type Currency } from '../money';
import { fxConversion } from '../postings';
import { asScreened, type LedgerCommand } from './command';
import type { AccountFacts } from './facts';

/** Executes a persisted FX quote of the commanding account (DESIGN.md section 5b). */
export interface FxExecute {
  quote_id: string;
  entry_id: string;
}

export const fxExecute: LedgerCommand<FxExecute> = {
  shape: { ids: ['quote_id', 'entry_id'], amounts: [], currencies: [], accountIsUuid: true },
  parse: asScreened,
  needs: (payload) => ({ sender: true, quotes: [payload.quote_id] }),
  accounts(payload, accountId, facts) {
    const quote = facts.quotes.get(payload.quote_id);
    if (!quote || quote.account_id !== accountId) return []; // refused: not the account's quote
    return [available(accountId, quote.from_currency), available(accountId, quote.to_currency), fxPosition(quote.from_currency), fxPosition(quote.to_currency), fxSpread(quote.to_currency)];
  },
  decide: ({ accountId, payload, facts, locked, book, now }) => decideFxExecute(accountId, payload, {
    account: facts.accountsById.get(accountId) ?? null, quote: locked.quotes.get(payload.quote_id) ?? null,
  }, book, now),
};

export interface FxExecuteFacts {
  account: AccountFacts | null;
  /** The quote as the ledger holds it now (locked for the batch); null when unknown. */
  quote: FxQuoteRecord | null;
}

/** Checks in order of precedence; another account's quote is as unknown as a missing one. */
function refuseFxExecute(accountId: string, command: FxExecute, { account, quote }: FxExecuteFacts, book: BalanceBook, now: Date): Decision | null {
  if (!account) return refusal('resource_not_found', 'the account does not exist');
  if (!quote || quote.account_id !== accountId) return refusal('quote_not_found', 'no such FX quote', command.quote_id);
  const status = quoteStatus(quote, now);
  if (status === 'consumed') return refusal('quote_already_consumed', 'the quote was executed already', command.quote_id);
  if (status === 'expired') return refusal('quote_expired', `the quote expired at ${quote.expires_at.toISOString()}`, command.quote_id);
  if (account.kybStatus !== 'active') return refusal('account_not_active', `the account's KYB status is ${account.kybStatus}; it must be active to move money`);
  if (book.balance(available(accountId, quote.from_currency)).isLessThan(quote.from_amount)) {
    return refusal('insufficient_funds', `the available ${quote.from_currency} balance is below the quote's from_amount`, 'quote_id');
  }
  return null;
}

/** Executes a persisted quote: one conversion entry inside the account, the quote consumed with it. */
export function decideFxExecute(accountId: string, command: FxExecute, facts: FxExecuteFacts, book: BalanceBook, now: Date): Decision {
  const refused = refuseFxExecute(accountId, command, facts, book, now);
  if (refused) return refused;
  const quote: FxQuoteRecord = { ...facts.quote!, consumed_at: now };
  const entry = fxConversion(command.entry_id, quote.id, accountId, {
    from: quote.from_currency, to: quote.to_currency, fromAmount: new Money(quote.from_amount),
    toAmount: new Money(quote.to_amount), midRate: new Money(quote.mid_rate),
  });
  const postings = book.apply(entry);
  const onAvailable = (currency: Currency) => postings.find((p) => p.ref.kind === 'available' && p.ref.currency === currency)!.id;
  const decision = emptyDecision({
    kind: 'fx_execution', quote, entry_id: entry.id,
    debit_transaction_id: onAvailable(quote.from_currency), credit_transaction_id: onAvailable(quote.to_currency),
  });
  decision.entries.push({ entry, postings });
  decision.changes.push({ kind: 'quote_consumed', quote });
  decision.events.push(balanceEvent(book, accountId, quote.from_currency), balanceEvent(book, accountId, quote.to_currency));
  return decision;
}
