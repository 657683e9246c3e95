// faucet.credit: sandbox money from the faucet's equity, within its limits a day (ledger/decide.ts).
import { available, faucetEquity } from '../chart';
import { decideFaucetCredit } from '../decide';
import type { FaucetCredit } from '../messages';
import { Money } from '../money';
import { asScreened, type LedgerCommand } from './command';
import { faucetKey } from './facts';

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
