// What a round's commands name, merged: the records it locks and the facts it reads, in its
// first message to the store (ports.ts gather), before any command is decided.
import type { Needs, RefusedCommand, TakenCommand } from './command';

/** What a round's commands name, merged: each list without repeats. */
export interface RoundNeeds { senders: string[]; transfers: string[]; quotes: string[]; payments: string[]; wallets: string[]; holds: string[]; emails: string[]; banks: Required<Needs>['banks']; faucets: Array<{ accountId: string; currency: string }> }

export function needsOf(commands: ReadonlyArray<TakenCommand | RefusedCommand>): RoundNeeds {
  const needs: RoundNeeds = { senders: [], transfers: [], quotes: [], payments: [], wallets: [], holds: [], emails: [], banks: [], faucets: [] };
  for (const parsed of commands) {
    if ('refusal' in parsed) continue;
    const accountId = parsed.envelope.account_id;
    const named = parsed.command.needs(parsed.payload, accountId);
    if (named.sender) needs.senders.push(accountId);
    needs.transfers.push(...named.transfers ?? []);
    needs.quotes.push(...named.quotes ?? []);
    needs.payments.push(...named.payments ?? []);
    needs.wallets.push(...named.wallets ?? []);
    needs.holds.push(...named.holds ?? []);
    needs.emails.push(...named.emails ?? []);
    needs.banks.push(...named.banks ?? []);
    if (named.faucet) needs.faucets.push({ accountId, currency: named.faucet });
  }
  const unique = (list: string[]) => [...new Set(list)];
  return { ...needs, senders: unique(needs.senders), emails: unique(needs.emails) };
}
