// fx.execute: a persisted quote converted inside its account, through the FX desk, once.
import { available, fxPosition, fxSpread } from '../chart';
import { decideFxExecute } from '../decide';
import type { FxExecute } from '../messages';
import { asScreened, type LedgerCommand } from './command';

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
