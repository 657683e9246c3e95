// The ledger's answers to the requests waiting on its commands, sent from the ledger's own thread
// as soon as a round commits, ahead of the round's events and entries (DESIGN.md section 5f):
// a client's wait ends with the commit, not with the publication of everything the round wrote.
// A reply to a request waiting in this very process is handed over in memory
// (src/kafka/local-replies.ts). A reply lost here (a crash, Kafka away) is not lost for good: the client repeats its request
// with the same Idempotency-Key, and the ledger answers it again from the processed command.
import { REPLY_TO_HEADER, type LedgerCommandEnvelope, type LedgerReplyEnvelope } from '../../ledger/messages';
import { KEY_CONFLICT } from '../../ledger/outcome';
import { ProducerBatcher } from '../../src/kafka/batcher';
import { deliverInProcess } from '../../src/kafka/local-replies';
import { TOPICS } from '../../src/kafka/topics';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';

/** A reply waits at most this long to be handed to Kafka; past it, the client's retry asks again. */
const REPLY_SEND_DEADLINE_MS = 5_000;

/** What one command message is answered. */
export interface Reply {
  message: LedgerCommandEnvelope;
  /** The outcome's JSON text (outcome.ts). */
  outcome: string;
  /** The command was decided before this message: the outcome is the stored one. */
  replayed: boolean;
}

const CONFLICT = JSON.stringify(KEY_CONFLICT);

/**
 * The answer to a message whose command was decided (now or before) with the request
 * `decidedFingerprint`: the decision again, or a conflict when the message is another request
 * under the same key. Commands no key names carry no fingerprint, and match.
 */
export function answerTo(message: LedgerCommandEnvelope, outcome: string, decidedFingerprint: string | null, replayed: boolean): Reply {
  const fingerprint = message.fingerprint ?? null;
  if (fingerprint !== null && decidedFingerprint !== null && fingerprint !== decidedFingerprint) return conflictWith(message);
  return { message, outcome, replayed };
}

/** The answer to a message whose Idempotency-Key names another request. Not a decision: never stored. */
export function conflictWith(message: LedgerCommandEnvelope): Reply {
  return { message, outcome: CONFLICT, replayed: false };
}

export class ReplySender {
  private readonly batcher: ProducerBatcher;
  private readonly topic: string;

  constructor(private readonly runtime: Runtime) {
    this.batcher = new ProducerBatcher(runtime.producer);
    this.topic = runtime.names.full(TOPICS.ledgerReplies);
  }

  /** Sends the replies of the messages that have a request waiting; does not wait for Kafka. */
  async send(replies: Reply[]): Promise<void> {
    for (const { message, outcome, replayed } of replies) {
      if (!message.reply_to) continue;
      const envelope: LedgerReplyEnvelope = { command_id: message.id, reply_to: message.reply_to, outcome, request_id: message.request_id ?? null, replayed };
      if (deliverInProcess(envelope)) continue;
      // The header names the API process: the others skip the reply without decoding it.
      const value = await this.runtime.codec.encode(TOPICS.ledgerReplies, envelope);
      this.batcher.send(this.topic, { key: message.id, value, headers: { [REPLY_TO_HEADER]: message.reply_to } }, REPLY_SEND_DEADLINE_MS)
        .catch((error) => log.warn({ err: error, commandId: message.id }, 'a reply was not sent; the client learns the decision when it repeats the request'));
    }
  }

  flush(): Promise<void> {
    return this.batcher.flush();
  }
}
