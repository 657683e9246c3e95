// Reads the commands of a round: each parsed and screened as its kind's module says
// (ledger/commands), or refused as it is.
import { commandOf, isCommandType, parsePayload, type ParsedCommand } from '../../ledger/commands';
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { refused, type Refused } from '../../ledger/outcome';
import { firstUnstorable, unstorable } from '../../ledger/screen';
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
  const { type } = envelope;
  if (!isCommandType(type)) {
    return refuse(refused('invalid_request', `unknown command type "${String(type).slice(0, 100)}"`, 'type'));
  }
  let payload: unknown;
  try {
    payload = JSON.parse(envelope.payload);
  } catch {
    return refuse(refused('invalid_request', 'the command\'s payload is not JSON', 'payload'));
  }
  const parsed = parsePayload(type, envelope.account_id, payload);
  return 'refusal' in parsed ? refuse(parsed.refusal) : { envelope, type, payload: parsed.payload, command: commandOf(type) };
}
