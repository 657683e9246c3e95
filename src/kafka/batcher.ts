// kafkajs has no linger: every send is its own request, and an idempotent producer sends one
// at a time. Request paths that send one message per HTTP request gather them here: a message
// goes out at once (in the same turn of the event loop as any sent beside it) when no batch is
// in flight, and waits for the batch in flight otherwise, to go out with the others that came
// meanwhile. At light load no message waits for a linger; under load the batches grow by
// themselves (STACK.md, "Request/reply latency through Kafka").
//
// Batches go out one after another. While Kafka is away the one in flight waits on the
// producer's retries and the rest queue behind it; a message whose deadline passes while it
// still queues is dropped, never sent, so a backlog of requests that were already answered does
// not build up and pour into Kafka when it returns.
import type { Message, Producer, TopicMessages } from 'kafkajs';
import { sendBatches } from './send-batches';

/** The deadline passed; `sent` says whether the message had been handed to Kafka by then. */
export class SendDeadlineExceeded extends Error {
  constructor(readonly sent: boolean) {
    super(sent ? 'Kafka did not acknowledge the message in time' : 'the message waited too long to be sent, and was not');
    this.name = 'SendDeadlineExceeded';
  }
}

interface Pending {
  topic: string;
  message: Message;
  state: 'queued' | 'sending' | 'abandoned';
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class ProducerBatcher {
  private queue: Pending[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  /** The batch in flight; settles (never rejects) when Kafka answered it. */
  private sending: Promise<void> | null = null;

  constructor(private readonly producer: Producer) {}

  /**
   * Resolves once the message is acknowledged by all in-sync replicas. With `deadlineMs`, rejects
   * with SendDeadlineExceeded once it passes: a message not yet handed to Kafka then never is.
   */
  send(topic: string, message: Message, deadlineMs?: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const item: Pending = { topic, message, state: 'queued', resolve, reject };
      if (deadlineMs !== undefined) {
        const timer = setTimeout(() => {
          if (item.state === 'queued') item.state = 'abandoned';
          reject(new SendDeadlineExceeded(item.state === 'sending'));
        }, deadlineMs);
        item.resolve = () => { clearTimeout(timer); resolve(); };
        item.reject = (error) => { clearTimeout(timer); reject(error); };
      }
      this.queue.push(item);
      // Sent once this turn of the event loop has queued what it sends; later, if a batch is in flight.
      if (this.sending === null) this.scheduled ??= setImmediate(() => this.flushNow());
    });
  }

  /** Sends what is queued unless a batch is in flight (its end sends the queue then). */
  private flushNow(): void {
    if (this.scheduled) { clearImmediate(this.scheduled); this.scheduled = null; }
    if (this.sending !== null || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.sending = this.sendBatch(batch).finally(() => {
      this.sending = null;
      this.flushNow();
    });
  }

  private async sendBatch(queued: Pending[]): Promise<void> {
    const batch = queued.filter((item) => item.state === 'queued');
    if (batch.length === 0) return;
    const byTopic = new Map<string, Message[]>();
    for (const item of batch) {
      item.state = 'sending';
      const list = byTopic.get(item.topic) ?? [];
      list.push(item.message);
      byTopic.set(item.topic, list);
    }
    const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    try {
      await sendBatches(this.producer, topicMessages);
      for (const item of batch) item.resolve();
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }

  /** Sends whatever is queued and waits for it. */
  async flush(): Promise<void> {
    this.flushNow();
    while (this.sending !== null) await this.sending;
  }
}
