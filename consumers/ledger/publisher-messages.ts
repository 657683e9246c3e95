// What the ledger's main thread (publisher.ts) and its outbox publisher thread
// (publisher-thread.ts, a worker's entry file) say to each other, apart from both.
import type { OutboxMessage } from '../../src/outbox/encode';

export const PUBLISHER_ROLE = 'outbox';

export type ToPublisher =
  | { kind: 'round'; id: number; messages: OutboxMessage[] }
  | { kind: 'close' };

export type FromPublisher =
  | { kind: 'sent'; id: number }
  | { kind: 'lost'; id: number; reason: string };
