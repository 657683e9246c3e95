// A command that fails on its own, for a reason no retry changes (a value the round's statements
// refuse, a bug), is decided as refused: its processed record holds the refusal, its client gets
// it as a final answer, and a retry of the same request replays it. The round's other commands
// were committed without it while the consumer isolated it (src/kafka/consumer.ts).
import type { LedgerCommandEnvelope } from '../../ledger/messages';
import { refused } from '../../ledger/outcome';
import { isCanonicalUuid, unstorable } from '../../ledger/screen';
import type { Delivered } from '../../src/kafka/consumer';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { answerTo, type ReplySender } from './replies';

const MESSAGE = 'the ledger could not apply this command and refused it; nothing moved';

export async function refuseAlone(runtime: Runtime, replies: ReplySender, { value: envelope }: Delivered<LedgerCommandEnvelope>, error: Error): Promise<void> {
  // Without an id the refusal can be kept under, there is nothing to answer: a dead letter.
  if (typeof envelope.id !== 'string' || envelope.id === '' || unstorable(envelope.id)) throw error;
  log.error({ err: error, commandId: envelope.id, type: envelope.type }, 'a command failed alone: refused with a final answer');
  const keyed = typeof envelope.idempotency_key === 'string' && !unstorable(envelope.idempotency_key) && isCanonicalUuid(envelope.account_id)
    && (envelope.fingerprint == null || !unstorable(envelope.fingerprint));
  const outcome = JSON.stringify(refused('invalid_request', MESSAGE, null));
  const type = typeof envelope.type === 'string' && !unstorable(envelope.type) ? envelope.type.slice(0, 100) : 'unknown';
  // A command decided meanwhile (another ledger process, a round that committed after all) keeps its decision.
  const { rows } = await runtime.db.raw(
    `WITH inserted AS (
       INSERT INTO processed_commands (command_id, type, outcome, account_id, idempotency_key, fingerprint)
       VALUES (?, ?, ?::jsonb, ?, ?, ?) ON CONFLICT (command_id) DO NOTHING RETURNING outcome::text, fingerprint, false AS replayed)
     SELECT * FROM inserted
     UNION ALL SELECT outcome::text, fingerprint, true FROM processed_commands WHERE command_id = ? AND NOT EXISTS (SELECT 1 FROM inserted)`,
    [envelope.id, type, outcome, keyed ? envelope.account_id : null, keyed ? envelope.idempotency_key! : null, keyed ? envelope.fingerprint ?? null : null, envelope.id],
  );
  const stored = rows[0] as { outcome: string; fingerprint: string | null; replayed: boolean };
  await replies.send([answerTo(envelope, stored.outcome, stored.fingerprint, stored.replayed)]);
}
