// Publishes committed rounds to Kafka, in commit order, from a thread of its own
// (publisher-thread.ts) while the ledger goes on deciding the next round: Postgres and Kafka work
// overlap, on two cores. A round is marked published once Kafka has acknowledged all of it; if
// that fails (or the thread is gone), the sweeper publishes it later (sweeper.ts).
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { markRoundPublished } from '../../ledger/store';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { kafkaThreadSettings, startKafkaThread } from '../../src/kafka/thread';
import type { OutboxMessage } from './outbox';
import { PUBLISHER_ROLE, type FromPublisher, type ToPublisher } from './publisher-thread';

export interface Publication {
  /** Null for messages that belong to no new round (replies re-sent for redelivered commands). */
  roundId: string | null;
  messages: OutboxMessage[];
}

export class RoundPublisher {
  private nextId = 0;
  private readonly inFlight = new Map<number, { roundId: string | null; done: () => void }>();
  /** Settles once the latest publication is done; the thread works in order, so all before it are too. */
  private latest: Promise<void> = Promise.resolve();
  private threadGone = false;

  private constructor(private readonly runtime: Runtime, private readonly thread: Worker, private readonly queuedMax: number) {
    thread.on('message', (message: FromPublisher) => { void this.onReport(message); });
    thread.on('error', (error) => log.error({ err: error }, 'the outbox publisher thread failed: committed rounds wait for the sweeper'));
    thread.on('exit', () => {
      this.threadGone = true;
      for (const { done } of this.inFlight.values()) done();
      this.inFlight.clear();
    });
  }

  /** At most `queuedMax` rounds wait for Kafka before the ledger waits for them. */
  static async start(runtime: Runtime, queuedMax = 2): Promise<RoundPublisher> {
    const thread = await startKafkaThread(path.join(__dirname, 'publisher-thread.js'), PUBLISHER_ROLE, kafkaThreadSettings(runtime.config));
    thread.unref(); // the process ends when its roles have stopped
    return new RoundPublisher(runtime, thread, queuedMax);
  }

  async publish({ roundId, messages }: Publication): Promise<void> {
    if (this.threadGone) return; // the sweeper publishes the round from the outbox
    const id = ++this.nextId;
    this.latest = new Promise<void>((done) => this.inFlight.set(id, { roundId, done }));
    this.post({ kind: 'round', id, messages });
    if (this.inFlight.size > this.queuedMax) await this.latest;
  }

  private async onReport(message: FromPublisher): Promise<void> {
    const entry = this.inFlight.get(message.id);
    if (!entry) return;
    try {
      if (message.kind === 'lost') {
        log.warn({ reason: message.reason, roundId: entry.roundId }, 'a committed round could not be published now; the outbox sweeper will publish it');
      } else if (entry.roundId) {
        await markRoundPublished(this.runtime.db, entry.roundId);
      }
    } catch (error) {
      log.warn({ err: error, roundId: entry.roundId }, 'a published round could not be marked; the sweeper will publish it again (readers drop the duplicates by id)');
    } finally {
      this.inFlight.delete(message.id);
      entry.done();
    }
  }

  private post(message: ToPublisher): void {
    this.thread.postMessage(message);
  }

  /** Waits until every queued round has been sent (or given up). */
  flush(): Promise<void> {
    return this.latest;
  }

  /** Sends what is queued, then stops the thread and its producer. */
  async stop(): Promise<void> {
    await this.flush();
    if (this.threadGone) return;
    const exited = new Promise<void>((resolve) => this.thread.once('exit', () => resolve()));
    this.post({ kind: 'close' });
    await exited;
  }
}
