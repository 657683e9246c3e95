// The ingress side of the command/decision round trip (DESIGN.md section 3): a command goes to
// ledger.commands keyed by account, and the request waits, bounded, for the ledger's reply on
// ledger.replies. Every API process reads all replies in a consumer group of its own and keeps
// the ones addressed to it: the reply-to header says which, so the others are skipped before
// they are decoded. Each message names the request waiting on it, and its reply names it back:
// two requests that send one command (a retry racing the first) each get an answer of their own.
import type { Consumer } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import type { CommandType } from '../../ledger/commands';
import { REPLY_TO_HEADER, type LedgerCommandEnvelope, type LedgerReplyEnvelope } from '../../ledger/messages';
import { parseOutcome, type Outcome } from '../../ledger/outcome';
import { DomainError } from '../domain-error';
import { ProducerBatcher, SendDeadlineExceeded } from '../kafka/batcher';
import { startConsumer } from '../kafka/consumer';
import { receiveRepliesInProcess, type InProcessReply } from '../kafka/local-replies';
import { TOPICS } from '../kafka/topics';
import { log } from '../log';
import type { Runtime } from '../runtime';
import { wallNow } from '../clock';

export const PENDING_REPLIES_MAX = 50_000;
/** A new group of one member joins in well under a second here; thirty seconds means it will not. */
const JOIN_WAIT_MS = 30_000;
const JOIN_ATTEMPTS = 2;

class JoinTimeout extends Error {}
/** The ledger's answer to one message: the decision, and whether it was made before this message. */
export interface LedgerDecision { outcome: Outcome; replayed: boolean }

/**
 * For a command whose processed record is its Idempotency-Key's record (DESIGN.md section 5f):
 * the key and the request's fingerprint travel with it, and the ledger compares them.
 */
export interface CommandIdempotency { key: string; fingerprint: string }

interface Waiter { commandId: string; resolve: (reply: LedgerDecision | null) => void; timer: NodeJS.Timeout }

export class LedgerClient {
  readonly instanceId = randomUUID();
  /** Requests waiting for their decision, by the request id their message carries. */
  private readonly waiting = new Map<string, Waiter>();
  private readonly batcher: ProducerBatcher;
  private consumer: Consumer | null = null;
  private stopReceivingInProcess: () => void = () => undefined;

  constructor(private readonly runtime: Runtime, private readonly waitersMax = PENDING_REPLIES_MAX) {
    this.batcher = new ProducerBatcher(runtime.producer);
  }

  /**
   * Starts the reply consumer and waits until it joined its group: replies sent before would be
   * missed. A consumer whose join does not come within JOIN_WAIT_MS (a join can stay stuck in a
   * rebalance the coordinator no longer runs) is replaced by a new one, once; a consumer that
   * stopped for good, or a second that does not join either, fails the start (naming what it last
   * did), never hangs it.
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        this.consumer = await this.joinedConsumer();
        break;
      } catch (error) {
        if (!(error instanceof JoinTimeout) || attempt >= JOIN_ATTEMPTS) throw error;
        log.warn({ err: error }, 'the ledger reply consumer did not join its group: starting a new one');
      }
    }
    // A ledger in this process hands its replies over directly; the topic carries the others'.
    this.stopReceivingInProcess = receiveRepliesInProcess(this.instanceId, (reply) => this.receive(reply));
  }

  private async joinedConsumer(): Promise<Consumer> {
    let markJoined: () => void = () => undefined;
    const joined = new Promise<void>((resolve) => { markJoined = resolve; });
    const consumer = await startConsumer<LedgerReplyEnvelope>(this.runtime, {
      groupId: `${this.runtime.names.prefix}api-replies.${this.instanceId}`,
      topic: TOPICS.ledgerReplies,
      fromBeginning: false,
      partitionsConsumedConcurrently: this.runtime.config.kafkaPartitions,
      // A reply without the header (sent before it existed) is decoded, and its reply_to read.
      accepts: (headers) => {
        const to = headers?.[REPLY_TO_HEADER];
        return to === undefined || String(to) === this.instanceId;
      },
      // A consumer restarted in this process reads up to this much again: a reply settles nothing twice.
      commitIntervalMs: 5_000,
      handleBatch: async (messages) => {
        for (const { value } of messages) this.receive(value);
      },
      onGroupJoin: () => markJoined(),
    });
    let lastEvent = 'connected';
    const watching = [consumer.events.REBALANCING, consumer.events.CRASH, consumer.events.DISCONNECT, consumer.events.REQUEST_TIMEOUT].map((event) =>
      consumer.on(event, ({ type, payload }) => { lastEvent = `${type} ${JSON.stringify(payload ?? {}).slice(0, 300)}`; }));
    let timer: NodeJS.Timeout | undefined;
    const stopped = new Promise<never>((_, reject) => {
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (!payload.restart) reject(new Error(`the ledger reply consumer stopped before joining its group: ${payload.error.message}`));
      });
      timer = setTimeout(() => reject(new JoinTimeout(`the ledger reply consumer did not join its group within ${JOIN_WAIT_MS} ms; last: ${lastEvent}`)), JOIN_WAIT_MS);
    });
    try {
      await Promise.race([joined, stopped]);
      return consumer;
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
      for (const stopWatching of watching) stopWatching();
    }
  }

  private receive(reply: LedgerReplyEnvelope | InProcessReply): void {
    // A reply written before outcomes existed carries none: its request is answered as late.
    if (reply.reply_to !== this.instanceId || reply.outcome === '') return;
    this.settle(reply.command_id, reply.request_id ?? null, { outcome: parseOutcome(reply.outcome), replayed: reply.replayed ?? false });
  }

  /** Hands the decision to the request its message named; a reply that names none, to every request waiting for the command. */
  private settle(commandId: string, requestId: string | null, decision: LedgerDecision): void {
    const named = requestId === null ? [...this.waiting].filter(([, w]) => w.commandId === commandId) : [[requestId, this.waiting.get(requestId)] as const];
    for (const [id, waiter] of named) {
      if (!waiter || waiter.commandId !== commandId) continue;
      this.waiting.delete(id);
      clearTimeout(waiter.timer);
      waiter.resolve(decision);
    }
  }

  /** Ends one request's wait: null, the decision is late (or the command never left). */
  private giveUp(requestId: string): void {
    const waiter = this.waiting.get(requestId);
    if (!waiter) return;
    this.waiting.delete(requestId);
    clearTimeout(waiter.timer);
    waiter.resolve(null);
  }

  /**
   * Sends a command and waits up to `timeoutMs` for the decision; null when it is late (the
   * command stays queued and will be decided).
   */
  async execute(type: CommandType, commandId: string, accountId: string, payload: unknown, timeoutMs: number, idempotency?: CommandIdempotency): Promise<LedgerDecision | null> {
    // A full waiting list refuses the command before it is sent: a 202 here would promise a
    // decision for a command that never left.
    if (this.waiting.size >= this.waitersMax) {
      throw new DomainError('service_unavailable', 'the service is overloaded; repeat the request with the same Idempotency-Key', null, { 'Retry-After': '1' });
    }
    const requestId = randomUUID();
    const envelope: LedgerCommandEnvelope = {
      id: commandId, type, account_id: accountId, reply_to: this.instanceId, issued_at: wallNow().toISOString(), payload: JSON.stringify(payload),
      idempotency_key: idempotency?.key ?? null, fingerprint: idempotency?.fingerprint ?? null, request_id: requestId,
    };
    const reply = new Promise<LedgerDecision | null>((resolve) => {
      this.waiting.set(requestId, { commandId, resolve, timer: setTimeout(() => this.giveUp(requestId), timeoutMs) });
    });
    try {
      const value = await this.runtime.codec.encode(TOPICS.ledgerCommands, envelope);
      await this.batcher.send(this.runtime.names.full(TOPICS.ledgerCommands), { key: accountId, value }, this.runtime.config.ledgerCommandSendDeadlineMs);
    } catch (error) {
      this.giveUp(requestId); // nobody waits for this decision now
      if (error instanceof SendDeadlineExceeded) throw kafkaTooSlow(error.sent);
      throw error;
    }
    return reply;
  }

  async stop(): Promise<void> {
    this.stopReceivingInProcess();
    await this.batcher.flush();
    await this.consumer?.disconnect();
  }
}

/** 503 naming Kafka: the command was not sent, or it was and its fate is unknown. */
function kafkaTooSlow(sent: boolean): DomainError {
  const message = sent
    ? 'kafka did not acknowledge the command in time; its outcome is unknown until you repeat the request with the same Idempotency-Key'
    : 'kafka is unavailable; the command was not sent: repeat the request with the same Idempotency-Key';
  return new DomainError('service_unavailable', message, 'kafka', { 'Retry-After': '2' });
}
