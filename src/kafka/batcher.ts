// kafkajs has no linger: every send is its own request, and an idempotent producer sends one
// at a time. Request paths that send one message per HTTP request gather them here for up to
// `lingerMs` and send them as one batch (STACK.md, "Request/reply latency through Kafka").
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
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly producer: Producer, private readonly lingerMs = 1, private readonly batchSizeMax = 1000) {}

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
      if (this.queue.length >= this.batchSizeMax) this.flushNow();
      else this.timer ??= setTimeout(() => this.flushNow(), this.lingerMs);
    });
  }

  private flushNow(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    this.sending = this.sending.then(() => this.sendBatch(batch));
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
    await this.sending;
  }
}
