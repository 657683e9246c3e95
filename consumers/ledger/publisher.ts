// Publishes committed rounds to Kafka, in commit order, from a thread of its own
// (publisher-thread.ts) while the ledger goes on deciding the next round: Postgres and Kafka work
// overlap, on two cores. A round is marked published once Kafka has acknowledged all of it; if
// that fails, the sweeper publishes it later (src/outbox/sweeper.ts). A thread that dies is restarted
// (supervised-thread.ts) and gets again the rounds it had not reported on.
import path from 'node:path';
import { markRoundsPublished } from '../../src/outbox/rounds';
import { SupervisedThread } from '../../src/kafka/supervised-thread';
import { kafkaThreadSettings } from '../../src/kafka/thread';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import type { OutboxMessage } from '../../src/outbox/encode';
import { PUBLISHER_ROLE, type FromPublisher, type ToPublisher } from './publisher-messages';

/** How long acknowledged rounds wait for a ledger round to remove their marks before a statement of their own does. */
const MARK_DELAY_MS = 200;

export interface Publication {
  /** Null for messages that belong to no new round (replies re-sent for redelivered commands). */
  roundId: string | null;
  messages: OutboxMessage[];
}

export class RoundPublisher {
  private nextId = 0;
  /** Rounds posted and not yet reported on, by id: re-posted, in order, if the thread dies. */
  private readonly inFlight = new Map<number, { roundId: string | null; messages: OutboxMessage[]; done: () => void }>();
  /** Settles once the latest publication is done; the thread works in order, so all before it are too. */
  private latest: Promise<void> = Promise.resolve();
  /** Rounds Kafka acknowledged whose unpublished marks are still to be removed. */
  private acknowledged: string[] = [];
  private markTimer: NodeJS.Timeout | null = null;

  private constructor(private readonly runtime: Runtime, readonly thread: SupervisedThread<ToPublisher>, private readonly queuedMax: number) {
    thread.onMessage((message) => { void this.onReport(message as FromPublisher); });
    thread.onRestarted(() => {
      for (const [id, { messages }] of [...this.inFlight].sort(([a], [b]) => a - b)) this.post({ kind: 'round', id, messages });
    });
  }

  /** At most `queuedMax` rounds wait for Kafka before the ledger waits for them. */
  static async start(runtime: Runtime, queuedMax = 2): Promise<RoundPublisher> {
    const thread = await SupervisedThread.start<ToPublisher>(path.join(__dirname, 'publisher-thread.js'), PUBLISHER_ROLE, kafkaThreadSettings(runtime.config));
    return new RoundPublisher(runtime, thread, queuedMax);
  }

  async publish({ roundId, messages }: Publication): Promise<void> {
    const id = ++this.nextId;
    this.latest = new Promise<void>((done) => this.inFlight.set(id, { roundId, messages, done }));
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
        this.acknowledged.push(entry.roundId);
        this.markTimer ??= setTimeout(() => void this.markAcknowledged(), MARK_DELAY_MS);
      }
    } finally {
      this.inFlight.delete(message.id);
      entry.done();
    }
  }

  /**
   * Hands the acknowledged rounds to the ledger's next round, which removes their marks in its
   * own transaction: under load no round costs a statement of its own to be marked published.
   */
  takeAcknowledged(): string[] {
    const rounds = this.acknowledged;
    this.acknowledged = [];
    return rounds;
  }

  /** Takes back rounds whose marks a failed ledger round did not remove. */
  returnAcknowledged(rounds: string[]): void {
    if (rounds.length === 0) return;
    this.acknowledged.push(...rounds);
    this.markTimer ??= setTimeout(() => void this.markAcknowledged(), MARK_DELAY_MS);
  }

  /** Marks the acknowledged rounds no ledger round took, when the ledger is quiet. */
  private async markAcknowledged(): Promise<void> {
    this.markTimer = null;
    const rounds = this.takeAcknowledged();
    if (rounds.length === 0) return;
    try {
      await markRoundsPublished(this.runtime.db, rounds);
    } catch (error) {
      log.warn({ err: error, rounds: rounds.length }, 'published rounds could not be marked; the sweeper will publish them again (readers drop the duplicates by id)');
    }
  }

  private post(message: ToPublisher): void {
    this.thread.post(message);
  }

  /** Waits until every queued round has been sent (or given up). */
  flush(): Promise<void> {
    return this.latest;
  }

  /** Sends what is queued, then stops the thread and its producer. */
  async stop(): Promise<void> {
    await this.flush();
    if (this.markTimer) clearTimeout(this.markTimer);
    await this.markAcknowledged();
    await this.thread.close();
  }
}
