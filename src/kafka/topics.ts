// The topics of the Kafka backbone (DESIGN.md section 3). Names carry a configurable prefix so
// a test run has topics of its own.
import type { Admin } from 'kafkajs';
import { wallNowMs } from '../clock';

export const TOPICS = {
  ledgerCommands: 'ledger.commands',
  ledgerReplies: 'ledger.replies',
  partnerCommands: 'partner.commands',
  domainEvents: 'domain.events',
  ledgerEntries: 'ledger.entries',
  requestLogs: 'request.logs',
} as const;
export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

/**
 * The Kafka header on an account's domain event naming the account: a notifier skips, without
 * decoding it, an event of an account that has no open stream in its process.
 */
export const ACCOUNT_ID_HEADER = 'account-id';

/** The headers of a domain event on Kafka. */
export const domainEventHeaders = (accountId: string | null): Record<string, string> | undefined => (accountId ? { [ACCOUNT_ID_HEADER]: accountId } : undefined);

/** Topics a consumer reads get a dead-letter twin that keeps the poison message and the reason. */
export const deadLetterTopic = (topic: string): string => `${topic}.dlq`;

export class TopicNames {
  constructor(readonly prefix: string) {}
  full(topic: string): string {
    return `${this.prefix}${topic}`;
  }
  all(): string[] {
    return Object.values(TOPICS).flatMap((t) => [this.full(t), this.full(deadLetterTopic(t))]);
  }
}

const LEADERS_WAIT_MS_MAX = 30_000;

/**
 * Creates the missing topics and waits until every partition of every topic has a leader: just
 * after creation the broker can still call a topic unknown, which kafkajs's own wait for
 * leaders (createTopics' waitForLeaders) does not retry, so the loop below does the waiting.
 */
export async function ensureTopics(admin: Admin, topics: string[], partitions: number): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t));
  if (missing.length > 0) {
    await admin.createTopics({
      waitForLeaders: false,
      topics: missing.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
    });
  }
  const deadline = wallNowMs() + LEADERS_WAIT_MS_MAX;
  for (;;) {
    try {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      if (metadata.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return missing;
    } catch (error) {
      if (wallNowMs() >= deadline) throw error;
    }
    if (wallNowMs() >= deadline) throw new Error(`topics have no leader after ${LEADERS_WAIT_MS_MAX} ms: ${topics.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
