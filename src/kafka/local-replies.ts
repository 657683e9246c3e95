// Replies that need not cross Kafka: when the ledger runs in the process of the API that waits for
// its decision (`npm start`, every role in one process), the reply is handed over in memory as the
// round commits, instead of a produce, a fetch and a wake-up for an answer already here. Each
// waiting client registers under the reply-to name its commands carry; a reply to any other name
// goes through the ledger.replies topic, as it does between processes.

/** A ledger reply, as the ledger.replies topic carries it (ledger/messages.ts, LedgerReplyEnvelope). */
export interface InProcessReply { command_id: string; reply_to: string | null; outcome: string; request_id?: string | null; replayed?: boolean }

type Receiver = (reply: InProcessReply) => void;

const receivers = new Map<string, Receiver>();

/** Replies addressed to `replyTo` are handed to `receive` while registered; returns the unregistration. */
export function receiveRepliesInProcess(replyTo: string, receive: Receiver): () => void {
  receivers.set(replyTo, receive);
  return () => {
    if (receivers.get(replyTo) === receive) receivers.delete(replyTo);
  };
}

/** Hands the reply over when its addressee is in this process; false: it must go through Kafka. */
export function deliverInProcess(reply: InProcessReply): boolean {
  const receive = reply.reply_to === null ? undefined : receivers.get(reply.reply_to);
  if (!receive) return false;
  receive(reply);
  return true;
}
