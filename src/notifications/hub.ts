// In-process fan-out of domain events to the open event streams of this process, by account
// (SPEC.md section 6; DESIGN.md section 3: domain.events → notifier → SSE /v1/notifications).
// Every subscriber has a bounded queue: one that falls behind is closed rather than allowed to
// grow, and its client reconnects with Last-Event-ID and replays from Postgres. Events may be
// delivered more than once (outbox re-publication, replay overlapping live delivery): each
// subscriber drops the ids it has recently delivered.
import type { DomainEventEnvelope } from '../../ledger/messages';
import { DomainError } from '../domain-error';
import { wallNowMs } from '../clock';

export interface HubLimits {
  /** Events waiting for one subscriber; one more closes it with `queue_full`. */
  queueLengthMax: number;
  /** Delivered ids one subscriber remembers for deduplication (oldest forgotten first). */
  recentIdsMax: number;
  /** Open streams of one account in this process. */
  subscribersPerAccountMax: number;
  /** Open streams in this process. */
  subscribersMax: number;
}

export const HUB_LIMITS_DEFAULT: HubLimits = {
  queueLengthMax: 1_000,
  recentIdsMax: 2_000,
  subscribersPerAccountMax: 20,
  subscribersMax: 10_000,
};

/**
 * Why a subscription ended: `unsubscribed` (its stream is gone), `queue_full` (it fell behind),
 * `hub_closed` (the process is shutting down).
 */
export type CloseReason = 'unsubscribed' | 'queue_full' | 'hub_closed';

/** A set of ids that forgets the oldest once it holds `sizeMax` (Set keeps insertion order). */
export class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly sizeMax: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Adds `id`; false when it was already there. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.sizeMax) this.ids.delete(this.ids.values().next().value as string);
    return true;
  }

  get size(): number {
    return this.ids.size;
  }
}

/** One open stream's view of the hub: a bounded queue read with `next()`. */
export class Subscription {
  private queue: DomainEventEnvelope[] = [];
  private readonly recent: RecentIds;
  private wake: (() => void) | null = null;
  private reason: CloseReason | null = null;

  constructor(
    readonly accountId: string,
    private readonly queueLengthMax: number,
    recentIdsMax: number,
    private readonly detach: (subscription: Subscription) => void,
  ) {
    this.recent = new RecentIds(recentIdsMax);
  }

  /** Null while open; afterwards why it closed. */
  get closeReason(): CloseReason | null {
    return this.reason;
  }

  get queueLength(): number {
    return this.queue.length;
  }

  /** Hub side: queues `event` unless already delivered; a full queue closes the subscription. */
  offer(event: DomainEventEnvelope): void {
    if (this.reason !== null || this.recent.has(event.id)) return;
    if (this.queue.length >= this.queueLengthMax) {
      this.close('queue_full');
      return;
    }
    this.queue.push(event);
    this.wake?.();
  }

  /**
   * Records `id` as delivered by another path (the Postgres replay), so its live copy is
   * dropped. False when it was already delivered.
   */
  remember(id: string): boolean {
    return this.recent.add(id);
  }

  /** The next event not delivered before, in arrival order; null once the subscription is closed. */
  async next(): Promise<DomainEventEnvelope | null> {
    return this.nextWithin(undefined) as Promise<DomainEventEnvelope | null>;
  }

  /** As next(), or 'timeout' when nothing arrived within `timeoutMs` (undefined: no bound). */
  async nextWithin(timeoutMs: number | undefined): Promise<DomainEventEnvelope | null | 'timeout'> {
    const deadline = timeoutMs === undefined ? null : wallNowMs() + timeoutMs;
    for (;;) {
      if (this.reason !== null) return null;
      const event = this.queue.shift();
      if (event) {
        if (this.recent.add(event.id)) return event;
        continue;
      }
      if (deadline !== null && wallNowMs() >= deadline) return 'timeout';
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        if (deadline !== null) setTimeout(resolve, deadline - wallNowMs());
      });
      this.wake = null;
    }
  }

  /** What is queued now and was not delivered before, in arrival order, without waiting. */
  takeQueued(): DomainEventEnvelope[] {
    const taken = this.queue.filter((event) => this.recent.add(event.id));
    this.queue = [];
    return taken;
  }

  /** Idempotent. Drops what is queued: a client that reconnects replays it from Postgres. */
  close(reason: CloseReason): void {
    if (this.reason !== null) return;
    this.reason = reason;
    this.queue = [];
    this.detach(this);
    this.wake?.();
  }
}

export class NotificationHub {
  private readonly byAccount = new Map<string, Set<Subscription>>();
  private count = 0;

  constructor(private readonly limits: HubLimits = HUB_LIMITS_DEFAULT) {}

  /**
   * @throws DomainError rate_limit_exceeded when the account has subscribersPerAccountMax open streams here
   * @throws DomainError service_unavailable when this process has subscribersMax open streams
   */
  subscribe(accountId: string): Subscription {
    const own = this.byAccount.get(accountId) ?? new Set<Subscription>();
    if (own.size >= this.limits.subscribersPerAccountMax) {
      throw new DomainError('rate_limit_exceeded', `at most ${this.limits.subscribersPerAccountMax} event streams may be open per account; close one first`, null, { 'Retry-After': '5' });
    }
    if (this.count >= this.limits.subscribersMax) {
      throw new DomainError('service_unavailable', 'this server holds as many event streams as it can; retry shortly', null, { 'Retry-After': '5' });
    }
    const subscription = new Subscription(accountId, this.limits.queueLengthMax, this.limits.recentIdsMax, (s) => this.detach(s));
    own.add(subscription);
    this.byAccount.set(accountId, own);
    this.count++;
    return subscription;
  }

  /** Offers `event` to every open stream of its account; returns how many it was offered to. */
  publish(event: DomainEventEnvelope): number {
    // An operator event (reconciliation.completed) belongs to no account's stream.
    if (event.account_id === null) return 0;
    const own = this.byAccount.get(event.account_id);
    if (!own) return 0;
    // A copy: offer() may close a subscription, which removes it from `own`.
    const subscribers = [...own];
    for (const subscription of subscribers) subscription.offer(event);
    return subscribers.length;
  }

  /** Open subscriptions, of one account or of the whole process. */
  subscriberCount(accountId?: string): number {
    return accountId === undefined ? this.count : this.byAccount.get(accountId)?.size ?? 0;
  }

  /** Closes every subscription (process shutdown); their streams end and clients reconnect elsewhere. */
  closeAll(): void {
    for (const own of [...this.byAccount.values()]) {
      for (const subscription of [...own]) subscription.close('hub_closed');
    }
  }

  private detach(subscription: Subscription): void {
    const own = this.byAccount.get(subscription.accountId);
    if (!own?.delete(subscription)) return;
    this.count--;
    if (own.size === 0) this.byAccount.delete(subscription.accountId);
  }
}
