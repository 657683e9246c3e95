// Reads the commands of a round: each parsed and screened as its kind's module says
// (ledger/commands), or refused as it is; and what the round must read before it locks anything,
// merged from what each command names.
import { COMMANDS, type Needs, type ParsedCommand } from '../../ledger/commands';
import { COMMAND_TYPES, type LedgerCommandEnvelope } from '../../ledger/messages';
import { refused, type Refused } from '../../ledger/outcome';
import { firstUnstorable, screenPayload, unstorable } from '../../ledger/screen';
import type { TransferRecord } from '../../ledger/transfers';
import { PoisonMessageError } from '../../src/kafka/consumer';

export type { ParsedCommand };

/**
 * A command as the round decides it: its payload parsed and screened, or refused as it is. Only a
 * message without an id the ledger can record its answer under is poison (the dead-letter topic).
 */
export function parseCommand(envelope: LedgerCommandEnvelope): ParsedCommand {
  if (typeof envelope.id !== 'string' || envelope.id === '' || unstorable(envelope.id)) {
    throw new PoisonMessageError('a command without an id the ledger can store');
  }
  const refuse = (refusal: Refused): ParsedCommand => ({ envelope, type: 'refused', refusal });
  const badText = firstUnstorable({ account_id: envelope.account_id, idempotency_key: envelope.idempotency_key, fingerprint: envelope.fingerprint }, 'command');
  if (badText) return refuse(refused('invalid_request', `${badText.path} ${badText.reason}`, badText.path));
  if (!(COMMAND_TYPES as readonly string[]).includes(envelope.type)) {
    return refuse(refused('invalid_request', `unknown command type "${String(envelope.type).slice(0, 100)}"`, 'type'));
  }
  let payload: unknown;
  try {
    payload = JSON.parse(envelope.payload);
  } catch {
    return refuse(refused('invalid_request', 'the command\'s payload is not JSON', 'payload'));
  }
  const refusal = screenPayload(envelope.type, envelope.account_id, payload);
  if (refusal) return refuse(refusal);
  const command = COMMANDS[envelope.type];
  const parsed = command.parse(payload);
  return 'refusal' in parsed ? refuse(parsed.refusal) : { envelope, type: envelope.type, payload: parsed.payload, command };
}

/** What a round's commands name, merged: each list without repeats. */
export interface RoundNeeds { senders: string[]; transfers: string[]; quotes: string[]; payments: string[]; wallets: string[]; holds: string[]; emails: string[]; banks: Required<Needs>['banks']; faucets: Array<{ accountId: string; currency: string }> }

export function needsOf(commands: ParsedCommand[]): RoundNeeds {
  const needs: RoundNeeds = { senders: [], transfers: [], quotes: [], payments: [], wallets: [], holds: [], emails: [], banks: [], faucets: [] };
  for (const parsed of commands) {
    if (parsed.type === 'refused') continue;
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

/** The wallets the transfers of partner results came from: an answer may give the money back to one. */
export function walletIdsOfTransfers(transfers: Map<string, TransferRecord>): string[] {
  return [...transfers.values()].flatMap((t) => (t.from_wallet_id === null ? [] : [t.from_wallet_id]));
}
