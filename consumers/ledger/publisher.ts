// Publishes committed rounds to Kafka, in commit order. A small round (the usual one at light
// load: a transfer or two) is encoded and sent from the ledger's own thread, on a producer of
// its own, in one request; a large round goes to a thread of its own (publisher-thread.ts), whose
// encoding then overlaps the ledger's next round on the other core. Handing every round to the
// thread cost two thread hops and a copy of each message for a round of seven messages. Rounds
// go out one after another whichever way they go: a round is sent here only when the thread has
// nothing in flight, and one is posted to the thread only once what is sent here is done. A round
// is marked published once Kafka has acknowledged all of it; if that fails, the sweeper publishes
// it later (sweeper.ts). A thread that dies is restarted (supervised-thread.ts) and gets again
// the rounds it had not reported on.
import path from 'node:path';
import type { Producer } from 'kafkajs';
import { markRoundsPublished } from '../../ledger/outbox';
import { createProducer } from '../../src/kafka/client';
import { sendBatches } from '../../src/kafka/send-batches';
import { TOPICS } from '../../src/kafka/topics';
import { SupervisedThread } from '../../src/kafka/supervised-thread';
import { kafkaThreadSettings } from '../../src/kafka/thread';
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { knowTopics } from '../../src/warm-up';
import { toTopicMessages, type OutboxMessage } from './outbox';
import { PUBLISHER_ROLE, type FromPublisher, type ToPublisher } from './publisher-messages';

/** How long acknowledged rounds wait for a ledger round to remove their marks before a statement of their own does. */
const MARK_DELAY_MS = 200;
/** A round of at most this many messages is sent from the ledger's own thread. */
const SMALL_ROUND_MESSAGES = 32;

export interface Publication {
  /** Null for messages that belong to no new round (replies re-sent for redelivered commands). */
  roundId: string | null;
  messages: OutboxMessage[];
}

export class RoundPublisher {
  private nextId = 0;
  /** Rounds posted and not yet reported on, by id: re-posted, in order, if the thread dies. */
  private readonly inFlight = new Map<number, { roundId: string | null; messages: OutboxMessage[]; done: () => void }>();
  /** Settles once the latest publication posted to the thread is done; the thread works in order, so all before it are too. */
  private latest: Promise<void> = Promise.resolve();
  /** Settles once the rounds sent from this thread are done (it never rejects); how many are queued there. */
  private sentHere: Promise<void> = Promise.resolve();
  private queuedHere = 0;
  /** Rounds Kafka acknowledged whose unpublished marks are still to be removed. */
  private acknowledged: string[] = [];
  private markTimer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly runtime: Runtime,
    readonly thread: SupervisedThread<ToPublisher>,
    private readonly producer: Producer,
    private readonly queuedMax: number,
  ) {
    thread.onMessage((message) => { void this.onReport(message as FromPublisher); });
    thread.onRestarted(() => {
      for (const [id, { messages }] of [...this.inFlight].sort(([a], [b]) => a - b)) this.postToThread({ kind: 'round', id, messages });
    });
  }

  /** At most `queuedMax` rounds wait for Kafka before the ledger waits for them. */
  static async start(runtime: Runtime, queuedMax = 2): Promise<RoundPublisher> {
    const [thread, producer] = await Promise.all([
      SupervisedThread.start<ToPublisher>(path.join(__dirname, 'publisher-thread.js'), PUBLISHER_ROLE, kafkaThreadSettings(runtime.config)),
      createProducer(runtime.kafka),
    ]);
    return new RoundPublisher(runtime, thread, producer, queuedMax);
  }

  async publish(publication: Publication): Promise<void> {
    if (publication.messages.length <= SMALL_ROUND_MESSAGES && this.inFlight.size === 0) {
      this.queuedHere++;
      this.sentHere = this.sentHere.then(() => this.sendHere(publication)).finally(() => { this.queuedHere--; });
      if (this.queuedHere > this.queuedMax) await this.sentHere;
      return;
    }
    await this.sentHere; // what this thread is sending goes to Kafka first
    await this.post(publication);
  }

  /** Fetches the metadata of the topics rounds go to, as the first small round's send would. */
  warm(): Promise<void> {
    return knowTopics({ producer: this.producer, names: this.runtime.names }, [TOPICS.domainEvents, TOPICS.ledgerEntries, TOPICS.partnerCommands]);
  }

  /** Encodes and sends a small round from this thread; a failure leaves it to the sweeper. */
  private async sendHere({ roundId, messages }: Publication): Promise<void> {
    try {
      await sendBatches(this.producer, await toTopicMessages(this.runtime, messages));
      if (roundId) this.acknowledge(roundId);
    } catch (error) {
      log.warn({ reason: (error as Error).message, roundId }, 'a committed round could not be published now; the outbox sweeper will publish it');
    }
  }

  private acknowledge(roundId: string): void {
    this.acknowledged.push(roundId);
    this.markTimer ??= setTimeout(() => void this.markAcknowledged(), MARK_DELAY_MS);
  }

  /** Hands a round to the thread. */
  private async post({ roundId, messages }: Publication): Promise<void> {
    const id = ++this.nextId;
    this.latest = new Promise<void>((done) => this.inFlight.set(id, { roundId, messages, done }));
    this.postToThread({ kind: 'round', id, messages });
    if (this.inFlight.size > this.queuedMax) await this.latest;
  }

  private async onReport(message: FromPublisher): Promise<void> {
    const entry = this.inFlight.get(message.id);
    if (!entry) return;
    try {
      if (message.kind === 'lost') {
        log.warn({ reason: message.reason, roundId: entry.roundId }, 'a committed round could not be published now; the outbox sweeper will publish it');
      } else if (entry.roundId) {
        this.acknowledge(entry.roundId);
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

  private postToThread(message: ToPublisher): void {
    this.thread.post(message);
  }

  /** Waits until every queued round has been sent (or given up). */
  async flush(): Promise<void> {
    await Promise.all([this.sentHere, this.latest]);
  }

  /** Sends what is queued, then stops the thread and both producers. */
  async stop(): Promise<void> {
    await this.flush();
    if (this.markTimer) clearTimeout(this.markTimer);
    await this.markAcknowledged();
    await this.thread.close();
    await this.producer.disconnect();
  }
}
