// kafkajs has no linger: every send is its own request, and an idempotent producer sends one
// at a time. Request paths that send one message per HTTP request gather them here for up to
// `lingerMs` and send them as one batch (STACK.md, "Request/reply latency through Kafka").
import type { Message, Producer, TopicMessages } from 'kafkajs';

interface Pending {
  topic: string;
  message: Message;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class ProducerBatcher {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly producer: Producer, private readonly lingerMs = 1, private readonly batchSizeMax = 1000) {}

  /** Resolves once the message is acknowledged by all in-sync replicas. */
  send(topic: string, message: Message): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ topic, message, resolve, reject });
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

  private async sendBatch(batch: Pending[]): Promise<void> {
    const byTopic = new Map<string, Message[]>();
    for (const item of batch) {
      const list = byTopic.get(item.topic) ?? [];
      list.push(item.message);
      byTopic.set(item.topic, list);
    }
    const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    try {
      await this.producer.sendBatch({ topicMessages, acks: -1 });
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
