// Sends webhook deliveries (DESIGN.md section 5d). New events arrive from the consumer (runner.ts)
// and are sent at once when there is room; everything else (retries, deliveries left for lack of
// room, manual retries and recoveries, attempts a dead dispatcher left behind) is claimed from
// Postgres when due: every `pollMs`, and at the earliest retry this dispatcher scheduled (a retry
// is sent when due, whatever the poll). A disabled endpoint's deliveries are recorded too and left pending: no claim
// takes them until it is enabled again, and then they go like any due delivery. Room is bounded
// twice: `concurrency` attempts in all, and `perEndpoint` per endpoint, so a receiver that hangs
// holds a few slots for at most `timeoutMs` and the others go on. Outcomes are written in batches
// by one writer; the endpoint's health follows them: a 2xx clears it, a 410 disables it at once,
// and one failing for `disableAfterMs` is disabled.
import { log } from '../../src/log';
import type { Runtime } from '../../src/runtime';
import { type AttemptOutcome, type DeliveryRow, type EventToDeliver, type NewDelivery, type WebhookDeliveries, wants } from '../../src/webhooks/deliveries';
import type { EndpointCache } from '../../src/webhooks/endpoint-cache';
import type { WebhookEndpointRow, WebhookEndpoints } from '../../src/webhooks/endpoints';
import { postWebhook, type AttemptResult } from '../../src/webhooks/post';
import { retryAfterMs, retryDelayMs } from '../../src/webhooks/schedule';
import { signatureHeaders } from '../../src/webhooks/signing';
import { disableEndpoint } from './disabling';
import { wallNow, wallNowMs } from '../../src/clock';

export interface DispatcherSettings {
  timeoutMs: number;
  scheduleMs: readonly number[];
  disableAfterMs: number;
  pollMs: number;
  concurrency: number;
  perEndpoint: number;
  /** Live: connect only to public addresses. */
  publicOnly: boolean;
}

/** 3 days, 5 hours, 30 seconds: the largest unit that fits. */
function describeDuration(ms: number): string {
  const [unit, size] = ([['day', 86_400_000], ['hour', 3_600_000], ['minute', 60_000], ['second', 1000]] as const).find(([, n]) => ms >= n) ?? ['second', 1000];
  const count = Math.round(ms / size);
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

/** After a retry's time, so that Postgres's clock (which the claim reads) has passed it too. */
const CLAIM_AT_MARGIN_MS = 5;

const isSuccess = (result: AttemptResult) => result.status !== null && result.status >= 200 && result.status < 300;

export class WebhookDispatcher {
  private inFlight = 0;
  private readonly inFlightByEndpoint = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private readonly outcomes: AttemptOutcome[] = [];
  private recording: Promise<void> | null = null;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  /** Deliveries may be due that no claim took yet (for lack of room): claim again when a slot frees. */
  private mayBeDue = false;
  private timer: NodeJS.Timeout | undefined;
  /** A claim armed for the earliest retry this dispatcher scheduled, so a retry is sent when due, not at the next poll. */
  private retryTimer: { at: number; timeout: NodeJS.Timeout } | null = null;
  private stopped = false;

  constructor(
    private readonly runtime: Runtime,
    private readonly deliveries: WebhookDeliveries,
    private readonly endpoints: WebhookEndpoints,
    private readonly endpointCache: EndpointCache,
    private readonly settings: DispatcherSettings,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.poll(), this.settings.pollMs);
    this.poll();
  }

  /** Events read from Kafka: records their deliveries and sends at once those there is room for. */
  async accept(events: EventToDeliver[]): Promise<void> {
    if (events.length === 0) return;
    const endpoints = await this.endpointCache.endpointsOf(events.map((event) => event.accountId));
    if (endpoints.length === 0) return;
    const wanted: NewDelivery[] = [];
    for (const event of events) {
      // A disabled endpoint's delivery is recorded unclaimed: it waits until the endpoint is enabled.
      for (const endpoint of endpoints) if (wants(endpoint, event)) wanted.push({ event, endpointId: endpoint.id, claim: endpoint.enabled && this.reserve(endpoint.id) });
    }
    let rows: DeliveryRow[] = [];
    try {
      rows = await this.deliveries.insert(wanted);
    } finally {
      // A reservation not taken by a claimed row (the delivery existed already, or the insert failed) is freed.
      const claimed = new Set(rows.filter((row) => row.attempts === 1).map((row) => `${row.endpoint_id}:${row.event_id}`));
      for (const { event, endpointId, claim } of wanted) if (claim && !claimed.has(`${endpointId}:${event.id}`)) this.release(endpointId);
    }
    const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));
    for (const row of rows) if (row.attempts === 1) this.launch(row, byId.get(row.endpoint_id)!);
    if (rows.some((row) => row.attempts === 0)) {
      this.mayBeDue = true;
      this.poll();
    }
  }

  /** Claims what is due, now (or right after the claim under way). */
  poll(): void {
    if (this.stopped) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = (async () => {
      do {
        this.pollAgain = false;
        await this.claim();
      } while (this.pollAgain && !this.stopped);
    })().catch((error) => log.warn({ err: error }, 'webhook deliveries not claimed now; the next poll tries again'))
      .finally(() => { this.polling = null; });
  }

  /** Stops claiming, lets the attempts under way finish (each within the timeout) and records them. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer.timeout);
    await this.polling;
    await Promise.allSettled([...this.running]);
    while (this.recording) await this.recording;
  }

  private async claim(): Promise<void> {
    const free = this.settings.concurrency - this.inFlight;
    if (free <= 0) {
      this.mayBeDue = true;
      return;
    }
    const rows = await this.deliveries.claimDue(free, this.settings.perEndpoint, this.inFlightByEndpoint);
    // Nothing claimed and no endpoint held back by its limit: nothing is due until the next poll.
    this.mayBeDue = rows.length > 0 || [...this.inFlightByEndpoint.values()].some((n) => n >= this.settings.perEndpoint);
    if (rows.length === 0) return;
    const endpoints = await this.deliveries.endpointsByIds(rows.map((row) => row.endpoint_id));
    for (const row of rows) {
      const endpoint = endpoints.get(row.endpoint_id);
      if (!endpoint) continue; // deleted meanwhile, and its deliveries with it
      this.take(row.endpoint_id);
      this.launch(row, endpoint);
    }
  }

  /** Claims at `at` (a retry falls due), unless a claim is armed for sooner. */
  private claimAt(at: number): void {
    if (this.stopped || (this.retryTimer !== null && this.retryTimer.at <= at)) return;
    if (this.retryTimer) clearTimeout(this.retryTimer.timeout);
    const timeout = setTimeout(() => {
      this.retryTimer = null;
      this.poll();
    }, Math.max(0, at - wallNowMs()) + CLAIM_AT_MARGIN_MS);
    this.retryTimer = { at, timeout };
  }

  private reserve(endpointId: string): boolean {
    if (this.stopped || this.inFlight >= this.settings.concurrency || (this.inFlightByEndpoint.get(endpointId) ?? 0) >= this.settings.perEndpoint) return false;
    this.take(endpointId);
    return true;
  }

  private take(endpointId: string): void {
    this.inFlight++;
    this.inFlightByEndpoint.set(endpointId, (this.inFlightByEndpoint.get(endpointId) ?? 0) + 1);
  }

  private release(endpointId: string): void {
    this.inFlight--;
    const left = (this.inFlightByEndpoint.get(endpointId) ?? 1) - 1;
    if (left > 0) this.inFlightByEndpoint.set(endpointId, left);
    else this.inFlightByEndpoint.delete(endpointId);
  }

  private launch(row: DeliveryRow, endpoint: WebhookEndpointRow): void {
    const attempt = this.attempt(row, endpoint)
      .catch((error) => log.error({ err: error, deliveryId: row.id }, 'a webhook attempt failed unexpectedly; the delivery falls due again when its lease ends'))
      .finally(() => {
        this.running.delete(attempt);
        this.release(row.endpoint_id);
        if (this.mayBeDue) this.poll();
      });
    this.running.add(attempt);
  }

  private async attempt(row: DeliveryRow, endpoint: WebhookEndpointRow): Promise<void> {
    const timestamp = Math.floor(wallNowMs() / 1000);
    const headers = signatureHeaders(this.endpoints.signingSecrets(endpoint), row.event_id, timestamp, row.body);
    const result = await postWebhook({ url: endpoint.url, headers, body: row.body, timeoutMs: this.settings.timeoutMs, publicOnly: this.settings.publicOnly });
    // The merchant's delivery log says only connection_failed or timeout; the operator's says why.
    if (result.detail) log.info({ deliveryId: row.id, endpointId: endpoint.id, error: result.error, detail: result.detail }, 'a webhook attempt failed');
    this.outcomes.push({ delivery: row, result, next: this.nextState(row, result) });
    this.record();
  }

  private nextState(row: DeliveryRow, result: AttemptResult): AttemptOutcome['next'] {
    if (isSuccess(result)) return { status: 'delivered' };
    if (result.status === 410) return { status: 'failed' };
    const now = wallNow();
    const delay = retryDelayMs(row.attempts, this.settings.scheduleMs, retryAfterMs(result.retryAfter, now));
    return delay === null ? { status: 'failed' } : { status: 'pending', at: new Date(now.getTime() + delay) };
  }

  /** One writer: outcomes that arrive while it writes go in its next batch. */
  private record(): void {
    if (this.recording) return;
    this.recording = (async () => {
      while (this.outcomes.length > 0) {
        const batch = this.outcomes.splice(0);
        try {
          await this.recordBatch(batch);
        } catch (error) {
          log.warn({ err: error, attempts: batch.length }, 'webhook attempts not recorded; their deliveries fall due again when their leases end');
        }
      }
    })().finally(() => { this.recording = null; });
  }

  private async recordBatch(batch: AttemptOutcome[]): Promise<void> {
    await this.deliveries.record(batch);
    const retries = batch.flatMap((o) => (o.next.status === 'pending' ? [o.next.at.getTime()] : []));
    if (retries.length > 0) this.claimAt(Math.min(...retries));
    const healthy = new Set(batch.filter((o) => o.next.status === 'delivered').map((o) => o.delivery.endpoint_id));
    const failing = [...new Set(batch.filter((o) => o.next.status !== 'delivered').map((o) => o.delivery.endpoint_id))].filter((id) => !healthy.has(id));
    await this.endpoints.markHealthy([...healthy]);
    const now = wallNow();
    const overdue = await this.endpoints.markFailing(failing, now, new Date(now.getTime() - this.settings.disableAfterMs));
    const gone = new Set(batch.filter((o) => o.result.status === 410).map((o) => o.delivery.endpoint_id));
    for (const id of gone) await disableEndpoint(this.runtime, id, 'the endpoint answered 410 Gone');
    for (const id of overdue) {
      if (!gone.has(id)) await disableEndpoint(this.runtime, id, `every delivery failed for ${describeDuration(this.settings.disableAfterMs)}`);
    }
  }
}
