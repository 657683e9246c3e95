// Every request becomes a Kafka message on request.logs (secrets redacted); a consumer writes
// them to Postgres. The request path only appends to an in-memory batch: logging never waits
// on Kafka, and a bounded queue drops (and counts) logs rather than grow without limit.
import type Koa from 'koa';
import type { Producer } from 'kafkajs';
import type { AvroCodec } from '../kafka/registry';
import { TOPICS, type TopicNames } from '../kafka/topics';
import { log } from '../log';
import type { Principal } from '../http/route';

export interface RequestLogRecord {
  id: string;
  account_id: string | null;
  credential_id: string | null;
  method: string;
  path: string;
  query: string;
  status: number;
  duration_us: number;
  idempotency_key: string | null;
  request_body: string | null;
  response_body: string | null;
  error_code: string | null;
  created_at: string;
}

const SECRET_FIELDS = /^(password|key|token|secret|client_secret|access_token|refresh_token|authorization)$/i;
const UNLOGGED_PATHS = new Set(['/healthz', '/readyz']); // probes, not client requests

/** JSON with the values of secret-bearing fields replaced, at any depth. */
export function redactedJson(value: unknown): string | null {
  if (value === undefined) return null;
  // A replacer rather than a redacted copy: this runs for every request and response body.
  return JSON.stringify(value, (key, inner) => (key !== '' && SECRET_FIELDS.test(key) ? '[redacted]' : inner));
}

/** A streamed response (the event stream of GET /v1/notifications) has no body to log. */
const isStream = (value: unknown): boolean => typeof (value as { pipe?: unknown } | null | undefined)?.pipe === 'function';

export class RequestLogRecorder {
  private queue: RequestLogRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private batches = 0;
  dropped = 0;

  /** `partitions`: of the request.logs topic; each batch goes whole to the next one in turn. */
  constructor(
    private readonly producer: Producer,
    private readonly codec: AvroCodec,
    private readonly names: TopicNames,
    private readonly partitions: number,
    private readonly flushMs = 20,
    private readonly batchSizeMax = 500,
    private readonly queueLengthMax = 20_000,
  ) {}

  record = (ctx: Koa.Context): void => {
    if (UNLOGGED_PATHS.has(ctx.path)) return;
    const principal = ctx.state.principal as Principal | null | undefined;
    const body = ctx.body as { success?: boolean; error?: string } | undefined;
    const startedAt = ctx.state.startedAt as bigint;
    if (this.queue.length >= this.queueLengthMax) {
      this.dropped++;
      if (this.dropped % 1000 === 1) log.warn({ dropped: this.dropped }, 'request log queue full: dropping logs');
      return;
    }
    this.queue.push({
      id: ctx.state.requestId,
      account_id: principal?.accountId ?? null,
      credential_id: principal?.credentialId ?? null,
      method: ctx.method,
      path: ctx.path,
      query: ctx.querystring,
      status: ctx.status,
      duration_us: Number((process.hrtime.bigint() - startedAt) / 1000n),
      idempotency_key: ctx.state.idempotencyKey ?? null,
      request_body: redactedJson(ctx.state.requestBody),
      response_body: isStream(body) ? null : redactedJson(body),
      error_code: body && body.success === false && typeof body.error === 'string' ? body.error : null,
      created_at: new Date().toISOString(),
    });
    if (this.queue.length >= this.batchSizeMax) this.flushSoon(0);
    else this.flushSoon(this.flushMs);
  };

  private flushSoon(delayMs: number): void {
    if (this.timer && delayMs > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.timer = null; void this.flush(); }, delayMs);
  }

  /** Sends what is queued; batches go out one after another, in order. */
  flush(): Promise<void> {
    this.inFlight = this.inFlight.then(async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.batchSizeMax);
        try {
          // One partition per batch: the order of logs means nothing, and a keyed message per
          // log would cost a hash each and split every batch twelve ways.
          const partition = this.batches++ % this.partitions;
          const messages = await Promise.all(batch.map(async (r) => ({ partition, value: await this.codec.encode(TOPICS.requestLogs, r) })));
          await this.producer.send({ topic: this.names.full(TOPICS.requestLogs), acks: -1, messages });
        } catch (error) {
          this.dropped += batch.length;
          log.warn({ err: error, lost: batch.length }, 'request logs could not be sent to Kafka');
        }
      }
    });
    return this.inFlight;
  }
}
