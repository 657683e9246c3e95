// Publishes committed rounds to Kafka one after another, while the ledger goes on deciding the
// next round: Postgres and Kafka work overlap. A round is marked published once Kafka has
// acknowledged all of it; if that fails, the sweeper publishes it later (sweeper.ts).
import { markRoundPublished } from '../../ledger/store';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { toTopicMessages } from './outbox';

export interface Publication {
  /** Null for messages that belong to no new round (replies re-sent for redelivered commands). */
  roundId: string | null;
  messages: Array<{ topic: string; key: string; payload: unknown }>;
}

export class RoundPublisher {
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;

  /** At most this many rounds wait for Kafka before the ledger waits for them. */
  constructor(private readonly runtime: Runtime, private readonly queuedMax = 2) {}

  async publish(publication: Publication): Promise<void> {
    this.queued++;
    this.chain = this.chain.then(() => this.send(publication)).finally(() => { this.queued--; });
    if (this.queued > this.queuedMax) await this.chain;
  }

  private async send({ roundId, messages }: Publication): Promise<void> {
    try {
      const topicMessages = await toTopicMessages(this.runtime, messages);
      if (topicMessages.length > 0) await this.runtime.producer.sendBatch({ topicMessages, acks: -1 });
      if (roundId) await markRoundPublished(this.runtime.db, roundId);
    } catch (error) {
      log.warn({ err: error, roundId }, 'a committed round could not be published now; the outbox sweeper will publish it');
    }
  }

  /** Waits until every queued round has been sent. */
  flush(): Promise<void> {
    return this.chain;
  }
}
