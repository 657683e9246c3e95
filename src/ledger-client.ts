// The ingress side of the command/decision round trip (DESIGN.md section 3): a command goes to
// ledger.commands keyed by account, and the request waits, bounded, for the ledger's reply on
// ledger.replies. Every API process reads all replies in a consumer group of its own and keeps
// the ones addressed to it.
import { createHash, randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import type { CommandType, LedgerCommandEnvelope, LedgerReplyEnvelope } from '../ledger/messages';
import { ProducerBatcher } from './kafka/batcher';
import { startConsumer } from './kafka/consumer';
import { TOPICS } from './kafka/topics';
import type { Runtime } from './runtime';

export interface LedgerReply {
  status: number;
  body: unknown;
}

/** A UUID derived from stable input, so a retried request names the same command and resource. */
export function derivedUuid(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((Number.parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const PENDING_REPLIES_MAX = 50_000;

export class LedgerClient {
  readonly instanceId = randomUUID();
  /** Requests waiting for their decision, by command id. */
  private readonly waiting = new Map<string, { resolve: (reply: LedgerReply | null) => void; timer: NodeJS.Timeout }>();
  private readonly batcher: ProducerBatcher;
  private consumer: Consumer | null = null;

  constructor(private readonly runtime: Runtime) {
    this.batcher = new ProducerBatcher(runtime.producer);
  }

  async start(): Promise<void> {
    let markJoined: () => void = () => undefined;
    const joined = new Promise<void>((resolve) => { markJoined = resolve; });
    this.consumer = await startConsumer<LedgerReplyEnvelope>(this.runtime, {
      groupId: `${this.runtime.names.prefix}api-replies.${this.instanceId}`,
      topic: TOPICS.ledgerReplies,
      fromBeginning: false,
      partitionsConsumedConcurrently: this.runtime.config.kafkaPartitions,
      handleBatch: async (messages) => {
        for (const { value } of messages) {
          if (value.reply_to !== this.instanceId) continue;
          this.settle(value.command_id, { status: value.status, body: JSON.parse(value.body) });
        }
      },
      onGroupJoin: () => markJoined(),
    });
    // Replies sent before this process joined its group would be missed: wait for the join.
    await joined;
  }

  /** Hands `reply` (null: no decision in time) to the request waiting for `commandId`, if any. */
  private settle(commandId: string, reply: LedgerReply | null): void {
    const waiter = this.waiting.get(commandId);
    if (!waiter) return;
    clearTimeout(waiter.timer);
    this.waiting.delete(commandId);
    waiter.resolve(reply);
  }

  /**
   * Sends a command and waits up to `timeoutMs` for the decision; null when it is late (the
   * command stays queued and will be decided).
   */
  async execute(type: CommandType, commandId: string, accountId: string, payload: unknown, timeoutMs: number): Promise<LedgerReply | null> {
    if (this.waiting.size >= PENDING_REPLIES_MAX) return null;
    const envelope: LedgerCommandEnvelope = {
      id: commandId, type, account_id: accountId, reply_to: this.instanceId, issued_at: new Date().toISOString(), payload: JSON.stringify(payload),
    };
    const reply = new Promise<LedgerReply | null>((resolve) => {
      this.waiting.set(commandId, { resolve, timer: setTimeout(() => this.settle(commandId, null), timeoutMs) });
    });
    try {
      const value = await this.runtime.codec.encode(TOPICS.ledgerCommands, envelope);
      await this.batcher.send(this.runtime.names.full(TOPICS.ledgerCommands), { key: accountId, value });
    } catch (error) {
      this.settle(commandId, null); // nobody waits on a command that never left
      throw error;
    }
    return reply;
  }

  async stop(): Promise<void> {
    await this.batcher.flush();
    await this.consumer?.disconnect();
  }
}
